import type { Statement } from "./prepared.js";

/** The narrow surface every feature uses; both adapters implement it. */
export interface Queryable {
  query<T extends object = Record<string, unknown>>(statement: Statement, params?: readonly unknown[]): Promise<T[]>;
  /** Runs a multi-statement script without parameters (migrations). */
  exec(script: string): Promise<void>;
}

export interface Db extends Queryable {
  readonly kind: "pglite" | "postgres";
  /**
   * Connections of the pool statements share (PostgreSQL); absent where there is no pool (PGlite
   * runs one statement at a time). Reports may hold all but a reserve of them (docs/limits.md).
   */
  readonly poolSize?: number;
  /**
   * When (performance.now()) the statement or transaction holding the database began, undefined
   * when none does: PGlite runs one at a time, on its own thread, and the others wait. Absent on
   * PostgreSQL (a pool). The health checks answer their last result rather than wait behind a
   * long one (features/health/checks.ts).
   */
  busySince?(): number | undefined;
  /** Runs `fn` in one transaction; commits when it resolves, rolls back when it throws. */
  transaction<T>(fn: (tx: Queryable) => Promise<T>): Promise<T>;
  /**
   * Calls `onMessage` with the payload of every NOTIFY on `channel`, from any node on the same
   * database, until the returned function is called.
   */
  listen(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>>;
  close(): Promise<void>;
  readonly closed: boolean;
  /**
   * The same database, its statements run without the statement timeout every other statement
   * runs under (PostgreSQL): for the scheduled jobs (the rollup fold, retention), whose
   * statements may rightly take longer than a request's should.
   */
  unbounded(): Db;
  /**
   * The same database, its commits answered before the WAL reaches the disk (PostgreSQL's
   * `synchronous_commit = off`): for the delivery workers' bookkeeping (claims, allowance counts,
   * attempts), which runs several commits per delivery and whose flushes would otherwise queue
   * with those of the conversions being answered. A crash of the service loses nothing (the
   * database has the commits); a crash of the database server may lose its last fraction of a
   * second of them, which can at worst send a delivery once more (its claim or its attempt
   * forgotten) or count it once less. Never for what an answer promises is stored.
   */
  withoutFlushWait(): Db;
}
