import { Cron } from "croner";
import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "./clock.js";
import type { Db } from "./db/index.js";
import { type JobRegistry, runJob } from "./jobs.js";

export interface Scheduler {
  stop(): Promise<void>;
}

/** Starts every registered job on its cron (UTC); each slot runs on one node only. */
export function startScheduler(deps: {
  db: Db;
  jobs: JobRegistry;
  clock: Clock;
  nodeId: string;
  log: FastifyBaseLogger;
}): Scheduler {
  const running = new Set<Promise<unknown>>();
  const crons = deps.jobs.list().map(
    (job) =>
      new Cron(job.cron, { timezone: "UTC", protect: true, name: job.name }, async (self: Cron) => {
        // The slot is the scheduled minute, which every node computes alike.
        const slotTime = self.currentRun() ?? deps.clock.now();
        slotTime.setUTCSeconds(0, 0);
        const run = runJob(deps.db, job, {
          slot: slotTime.toISOString(),
          manual: false,
          nodeId: deps.nodeId,
          now: deps.clock.now(),
        })
          .then((result) => {
            if (result.ran) deps.log.info({ job: job.name, summary: result.summary }, "scheduled job finished");
          })
          .catch((error: unknown) => deps.log.error({ err: error, job: job.name }, "scheduled job failed"));
        running.add(run);
        await run;
        running.delete(run);
      }),
  );
  return {
    async stop() {
      for (const cron of crons) cron.stop();
      await Promise.allSettled([...running]);
    },
  };
}
