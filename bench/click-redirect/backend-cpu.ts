import { readFileSync } from "node:fs";
import type pg from "pg";

/**
 * CPU time of the PostgreSQL backends serving one application_name, from /proc/<pid>/stat (the
 * database on this machine). pg_stat_statements would split it by statement, but it needs
 * shared_preload_libraries, a server restart; the benchmark splits the statement with EXPLAIN
 * ANALYZE instead (stages.ts).
 */

const TICKS_PER_S = 100;

/** CPU time (user + system) a process has used, in microseconds; null when it is not readable. */
export function processCpuUs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1_000_000) / TICKS_PER_S;
  } catch {
    return null;
  }
}

export type BackendCpu = Map<number, number>;

/** Every backend of `applicationName` and the CPU it has used so far; empty when /proc has none of them. */
export async function backendCpu(admin: pg.Client, applicationName: string): Promise<BackendCpu> {
  const { rows } = await admin.query<{ pid: number }>("select pid from pg_stat_activity where application_name = $1", [
    applicationName,
  ]);
  const cpu: BackendCpu = new Map();
  for (const { pid } of rows) {
    const us = processCpuUs(pid);
    if (us !== null) cpu.set(pid, us);
  }
  return cpu;
}

/** CPU the backends used between two snapshots; one that appeared in between counts from its start. */
export function backendCpuBetween(before: BackendCpu, after: BackendCpu): number {
  let sum = 0;
  for (const [pid, us] of after) sum += us - (before.get(pid) ?? 0);
  return sum;
}
