import type { Db } from "./db/index.js";
import type { Job } from "./jobs.js";

/** A table whose rows older than `days` (by `column`) are deleted by the retention job. */
export interface RetentionRule {
  table: string;
  column: string;
  days: number;
  /** Extra condition, e.g. only finished rows. */
  where?: string;
}

/** Built-in housekeeping; features add their own rules (event history keeps 120 days). */
export const PLATFORM_RETENTION: RetentionRule[] = [
  { table: "node_heartbeats", column: "last_seen_at", days: 1 },
  { table: "job_runs", column: "started_at", days: 120, where: "finished_at is not null" },
];

const IDENTIFIER = /^[a-z_][a-z0-9_]*$/;

export function retentionJob(db: Db, rules: RetentionRule[]): Job {
  for (const rule of rules) {
    // Table and column names are code constants, never input; refuse anything else anyway.
    if (!IDENTIFIER.test(rule.table) || !IDENTIFIER.test(rule.column))
      throw new Error(`bad retention rule ${rule.table}`);
  }
  return {
    name: "retention",
    description: "Deletes rows past their retention period (event history keeps 120 days)",
    cron: "15 3 * * *",
    async run(now) {
      const deleted: Record<string, number> = {};
      for (const rule of rules) {
        const cutoff = new Date(now.getTime() - rule.days * 86_400_000);
        const rows = await db.query(
          `delete from ${rule.table} where ${rule.column} < $1${rule.where ? ` and ${rule.where}` : ""} returning 1`,
          [cutoff],
        );
        deleted[rule.table] = (deleted[rule.table] ?? 0) + rows.length;
      }
      return { deleted };
    },
  };
}
