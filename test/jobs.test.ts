import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Db } from "../src/platform/db/index.js";
import { type Job, type JobSummary, runJob } from "../src/platform/jobs.js";
import { startTestApp, type TestApp } from "./helpers/app.js";

interface RunRow {
  node_id: string;
  manual: boolean;
  finished_at: Date | null;
  summary: JobSummary | null;
  error: string | null;
}

/** A job that counts its runs and, when given a gate, holds each run until the gate opens. */
function countingJob(name: string, gate?: Promise<void>): Job & { runs: Date[] } {
  const runs: Date[] = [];
  return {
    name,
    description: "test job",
    cron: "* * * * *",
    runs,
    async run(now) {
      runs.push(now);
      await gate;
      return { count: runs.length };
    },
  };
}

describe("runJob", () => {
  let t: TestApp;
  let slotCounter = 0;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  const nextSlot = () => {
    slotCounter += 1;
    return new Date(Date.UTC(2030, 0, 1, 0, slotCounter)).toISOString();
  };

  async function runsOf(db: Db, job: string): Promise<RunRow[]> {
    return db.query<RunRow>(
      "select node_id, manual, finished_at, summary, error from job_runs where job = $1 order by started_at",
      [job],
    );
  }

  it("runs a slot once: a second call for the same job and slot is skipped", async () => {
    const job = countingJob("once-sequential");
    const slot = nextSlot();
    const now = t.clock.now();

    const first = await runJob(t.ctx.db, job, { slot, manual: false, nodeId: "node_a", now });
    expect(first).toMatchObject({ job: job.name, slot, ran: true, summary: { count: 1 } });
    expect(first.finishedAt).toEqual(expect.any(String));

    const second = await runJob(t.ctx.db, job, { slot, manual: false, nodeId: "node_b", now });
    expect(second).toMatchObject({ job: job.name, slot, ran: false, summary: null, finishedAt: null });

    expect(job.runs).toEqual([now]);
    const rows = await runsOf(t.ctx.db, job.name);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ node_id: "node_a", manual: false, summary: { count: 1 }, error: null });
    expect(rows[0]?.finished_at).not.toBeNull();
  });

  it("runs the same job again for another slot, and another job for the same slot", async () => {
    const job = countingJob("per-slot");
    const other = countingJob("per-slot-other");
    const slot = nextSlot();
    const now = t.clock.now();
    expect((await runJob(t.ctx.db, job, { slot, manual: false, nodeId: "node_a", now })).ran).toBe(true);
    expect((await runJob(t.ctx.db, other, { slot, manual: false, nodeId: "node_a", now })).ran).toBe(true);
    expect((await runJob(t.ctx.db, job, { slot: nextSlot(), manual: false, nodeId: "node_a", now })).ran).toBe(true);
    expect(job.runs).toHaveLength(2);
    expect(other.runs).toHaveLength(1);
  });

  it("passes the given instant to the job, not the wall clock", async () => {
    const job = countingJob("as-of");
    const now = new Date("2031-02-03T04:05:06.000Z");
    await runJob(t.ctx.db, job, { slot: nextSlot(), manual: true, nodeId: "node_a", now });
    expect(job.runs).toEqual([now]);
  });

  // Two pools on one database need PostgreSQL: PGlite is a single connection.
  it.runIf(inject("dbKind") === "postgres")("on PostgreSQL, two nodes racing for one slot run it once", async () => {
    expect(t.testDb.kind).toBe("postgres");
    const other = t.testDb.openAnother();
    let open = () => {};
    const gate = new Promise<void>((resolve) => {
      open = resolve;
    });
    const job = countingJob("once-concurrent", gate);
    const slot = nextSlot();
    const now = t.clock.now();
    try {
      const a = runJob(t.ctx.db, job, { slot, manual: false, nodeId: "node_a", now });
      const b = runJob(other, job, { slot, manual: false, nodeId: "node_b", now });
      // The winner is held inside the job, so the first answer is the loser's, given while
      // the winner is still running: the claim, not a finished run, is what keeps it out.
      const loser = await Promise.race([a, b]);
      expect(loser).toMatchObject({ ran: false, summary: null });
      expect(job.runs).toHaveLength(1);
      open();
      const results = await Promise.all([a, b]);
      expect(results.filter((r) => r.ran)).toHaveLength(1);
      expect(results.filter((r) => !r.ran)).toHaveLength(1);
      expect(job.runs).toHaveLength(1);

      const rows = await runsOf(other, job.name);
      expect(rows).toHaveLength(1);
      const winner = results[0]?.ran ? "node_a" : "node_b";
      expect(rows[0]).toMatchObject({ node_id: winner, summary: { count: 1 }, error: null });
    } finally {
      open();
    }
  });

  it("records a failing job's error in job_runs and rethrows it", async () => {
    const failure = new Error("the mail server refused the batch");
    const job: Job = {
      name: "failing",
      description: "always fails",
      cron: "* * * * *",
      async run() {
        throw failure;
      },
    };
    const slot = nextSlot();
    await expect(runJob(t.ctx.db, job, { slot, manual: false, nodeId: "node_a", now: t.clock.now() })).rejects.toBe(
      failure,
    );
    const rows = await runsOf(t.ctx.db, job.name);
    expect(rows).toHaveLength(1);
    expect(rows[0]).toMatchObject({ error: "the mail server refused the batch", summary: null });
    // Finished, so it never reads as stuck in the health report.
    expect(rows[0]?.finished_at).not.toBeNull();
  });

  it("records a thrown non-Error as text", async () => {
    const job: Job = {
      name: "failing-oddly",
      description: "throws a string",
      cron: "* * * * *",
      async run() {
        throw "disk full";
      },
    };
    await expect(
      runJob(t.ctx.db, job, { slot: nextSlot(), manual: true, nodeId: "node_a", now: t.clock.now() }),
    ).rejects.toBe("disk full");
    const rows = await runsOf(t.ctx.db, job.name);
    expect(rows[0]).toMatchObject({ error: "disk full", manual: true });
  });
});
