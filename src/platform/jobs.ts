import type { Db } from "./db/index.js";
import { newId } from "./ids.js";

export type JobSummary = Record<string, unknown>;

export interface Job {
  /** Kebab-case name used in POST /api/admin/jobs/{name}/run. */
  name: string;
  description: string;
  /** Cron expression in UTC, for the scheduler role. */
  cron: string;
  /** Does the work as of `now` and says what it did. */
  run(now: Date): Promise<JobSummary>;
}

export interface JobRunResult {
  job: string;
  slot: string;
  ran: boolean;
  summary: JobSummary | null;
  startedAt: string;
  finishedAt: string | null;
}

export class JobRegistry {
  readonly #jobs = new Map<string, Job>();

  register(job: Job): void {
    if (this.#jobs.has(job.name)) throw new Error(`Job '${job.name}' is registered twice`);
    this.#jobs.set(job.name, job);
  }

  find(name: string): Job | undefined {
    return this.#jobs.get(name);
  }

  list(): Job[] {
    return [...this.#jobs.values()];
  }
}

/**
 * Runs `job` for one slot. The (job, slot) row is claimed first: on a second node the insert
 * finds the row and the slot is skipped, so each scheduled slot runs once across the cluster.
 * Manual runs get a slot of their own and are never skipped.
 */
export async function runJob(
  db: Db,
  job: Job,
  options: { slot: string; manual: boolean; nodeId: string; now: Date },
): Promise<JobRunResult> {
  const id = newId("run");
  const startedAt = new Date();
  const claimed = await db.query(
    `insert into job_runs (id, job, slot, manual, node_id, started_at) values ($1, $2, $3, $4, $5, $6)
     on conflict (job, slot) do nothing returning id`,
    [id, job.name, options.slot, options.manual, options.nodeId, startedAt],
  );
  if (claimed.length === 0) {
    return {
      job: job.name,
      slot: options.slot,
      ran: false,
      summary: null,
      startedAt: startedAt.toISOString(),
      finishedAt: null,
    };
  }
  try {
    const summary = await job.run(options.now);
    const finishedAt = new Date();
    await db.query("update job_runs set finished_at = $2, summary = $3 where id = $1", [
      id,
      finishedAt,
      JSON.stringify(summary),
    ]);
    return {
      job: job.name,
      slot: options.slot,
      ran: true,
      summary,
      startedAt: startedAt.toISOString(),
      finishedAt: finishedAt.toISOString(),
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    await db.query("update job_runs set finished_at = $2, error = $3 where id = $1", [id, new Date(), message]);
    throw error;
  }
}
