import { readFile } from "node:fs/promises";
import pg from "pg";

/**
 * CPU time spent on a measured run: this process's (the service, with PGlite when it is the
 * database; the load generator runs in a child process) and the PostgreSQL backends serving the
 * service's pool, read from /proc. Unlike requests per second, these hold across machines.
 */

// Linux reports process times in clock ticks of 1/100 s (USER_HZ) on every architecture Node supports.
const TICK_MS = 10;

/** utime + stime of a process in ms, or undefined once it is gone (or /proc is not there). */
async function processCpuMs(pid: number): Promise<number | undefined> {
  try {
    const stat = await readFile(`/proc/${pid}/stat`, "utf8");
    // The command name (field 2) may hold spaces and parentheses: count fields after its last ')'.
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) * TICK_MS;
  } catch {
    return undefined;
  }
}

/** The PostgreSQL backends whose connections carry `applicationName` (the service's pool). */
export class Backends {
  readonly #client: pg.Client;

  private constructor(client: pg.Client) {
    this.#client = client;
  }

  static async open(url: string): Promise<Backends> {
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    await client.connect();
    return new Backends(client);
  }

  /** Summed CPU ms of every backend of that application, by pid. */
  async cpu(applicationName: string): Promise<Map<number, number>> {
    const { rows } = await this.#client.query<{ pid: number }>(
      "select pid from pg_stat_activity where application_name = $1",
      [applicationName],
    );
    const times = new Map<number, number>();
    for (const { pid } of rows) {
      const ms = await processCpuMs(pid);
      if (ms !== undefined) times.set(pid, ms);
    }
    return times;
  }

  close(): Promise<void> {
    return this.#client.end();
  }
}

/** A connection string whose connections name themselves `applicationName` in pg_stat_activity. */
export function withApplicationName(url: string, applicationName: string): string {
  const parsed = new URL(url);
  parsed.searchParams.set("application_name", applicationName);
  return parsed.toString();
}

export interface Cost {
  /** CPU ms of this process over the run. */
  serviceMs: number;
  /** CPU ms of the service's PostgreSQL backends over the run; null on PGlite (inside serviceMs). */
  databaseMs: number | null;
}

export interface CostMark {
  process: NodeJS.CpuUsage;
  backends: Map<number, number> | null;
}

/** Marks the start of a run; `costSince` gives what it cost. */
export async function markCost(backends?: { meter: Backends; applicationName: string }): Promise<CostMark> {
  return {
    process: process.cpuUsage(),
    backends: backends === undefined ? null : await backends.meter.cpu(backends.applicationName),
  };
}

export async function costSince(
  mark: CostMark,
  backends?: { meter: Backends; applicationName: string },
): Promise<Cost> {
  const used = process.cpuUsage(mark.process);
  let databaseMs: number | null = null;
  if (backends !== undefined && mark.backends !== null) {
    databaseMs = 0;
    // A backend opened during the run counts from zero; one closed during it is lost (rare: the pool keeps them).
    for (const [pid, ms] of await backends.meter.cpu(backends.applicationName)) {
      databaseMs += ms - (mark.backends.get(pid) ?? 0);
    }
  }
  return { serviceMs: (used.user + used.system) / 1000, databaseMs };
}

/** CPU ms per 1,000 operations, one decimal. */
export function perThousand(ms: number | null, operations: number): number | null {
  if (ms === null || operations <= 0) return null;
  return Math.round((ms / operations) * 10_000) / 10;
}
