import pg from "pg";
import type { Statement } from "./prepared.js";
import { timeoutError } from "./statement-timeout.js";
import type { Db, Queryable } from "./types.js";

interface PostgresOptions {
  connectionString: string;
  /** Schema to put first on the search path (tests isolate each file in its own schema). */
  schema?: string;
  max?: number;
  /**
   * The statement timeout of every statement but those of `unbounded()`, in ms; absent, none
   * (openDatabase passes STATEMENT_TIMEOUT_MS; the tests and benchmarks open their own).
   */
  statementTimeoutMs?: number;
}

// int8 and numeric arrive as strings by default; counts and ids fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

const parseAnyTimestamptz = pg.types.getTypeParser(pg.types.builtins.TIMESTAMPTZ);

/** The number written by the ASCII digits of value[from, to), or -1 when one is not a digit. */
function digitsAt(value: string, from: number, to: number): number {
  let n = 0;
  for (let i = from; i < to; i++) {
    const d = value.charCodeAt(i) - 48;
    if (d < 0 || d > 9) return -1;
    n = n * 10 + d;
  }
  return n;
}

/**
 * A timestamptz as PostgreSQL writes it (`2026-11-26 14:11:00.123456+00`, or `+05:30`), read
 * without the default parser's three regular expressions: measured, that parser was the largest
 * cost of decoding a list page (every row carries two or three timestamps). The same Date, to
 * the millisecond truncated as that parser does; anything else (BC, years before 100, infinity,
 * offsets with seconds) goes to that parser.
 */
export function parseTimestamptz(value: string): Date | number | null {
  const n = value.length;
  const year = digitsAt(value, 0, 4);
  if (
    n < 22 ||
    year < 100 ||
    value.charCodeAt(4) !== 45 ||
    value.charCodeAt(7) !== 45 ||
    value.charCodeAt(10) !== 32 ||
    value.charCodeAt(13) !== 58 ||
    value.charCodeAt(16) !== 58
  ) {
    return parseAnyTimestamptz(value);
  }
  const month = digitsAt(value, 5, 7);
  const day = digitsAt(value, 8, 10);
  const hour = digitsAt(value, 11, 13);
  const minute = digitsAt(value, 14, 16);
  const second = digitsAt(value, 17, 19);
  let i = 19;
  let ms = 0;
  if (value.charCodeAt(i) === 46) {
    const start = i;
    i++;
    while (i < n && value.charCodeAt(i) >= 48 && value.charCodeAt(i) <= 57) i++;
    // As the default parser computes it, so every value comes out the same.
    ms = 1000 * Number(value.slice(start, i));
  }
  const sign = value.charCodeAt(i);
  const offsetHours = digitsAt(value, i + 1, i + 3);
  let offsetMinutes = 0;
  if (n === i + 6 && value.charCodeAt(i + 3) === 58) offsetMinutes = digitsAt(value, i + 4, i + 6);
  else if (n !== i + 3) return parseAnyTimestamptz(value);
  if (
    (sign !== 43 && sign !== 45) ||
    month < 0 ||
    day < 0 ||
    hour < 0 ||
    minute < 0 ||
    second < 0 ||
    offsetHours < 0 ||
    offsetMinutes < 0
  ) {
    return parseAnyTimestamptz(value);
  }
  const offsetMs = (offsetHours * 60 + offsetMinutes) * 60_000 * (sign === 43 ? 1 : -1);
  return new Date(Date.UTC(year, month - 1, day, hour, minute, second, ms) - offsetMs);
}
pg.types.setTypeParser(pg.types.builtins.TIMESTAMPTZ, parseTimestamptz);

/**
 * Array parameters longer than this run a prepared statement as a plain one, planned for its
 * values: its generic plan is costed for arrays of a few elements, and was measured to cost a
 * batch of 500 conversions nearly twice the database time (hash joins and sorts planned as
 * nested loops), while planning is a small part of such a batch's time.
 */
const PREPARED_ARRAY_MAX = 32;

const planOnce = (values: readonly unknown[]): boolean =>
  values.every((value) => !Array.isArray(value) || value.length <= PREPARED_ARRAY_MAX);

/** Runs the statements of one connection, a request's timeout turned into its 503. */
function queryable(client: pg.PoolClient, timeoutMs: number): Queryable {
  return {
    async query<T extends object>(statement: Statement, params: readonly unknown[] = []) {
      try {
        const values = params as unknown[];
        const result = await (typeof statement === "string"
          ? client.query<T>(statement, values)
          : planOnce(values)
            ? client.query<T>({ name: statement.name, text: statement.text, values })
            : client.query<T>(statement.text, values));
        return result.rows;
      } catch (error) {
        throw timeoutError(error, timeoutMs);
      }
    },
    async exec(script) {
      try {
        await client.query(script);
      } catch (error) {
        throw timeoutError(error, timeoutMs);
      }
    },
  };
}

/** What a connection is lent for: its statement timeout (0: none), and whether commits wait for the WAL flush. */
interface Session {
  timeoutMs: number;
  syncCommit: boolean;
}

/**
 * The session of each connection as last set: every connection opens with the statement timeout
 * and synchronous commits (options below), and one is switched by a `set` only when it is lent
 * to another kind of work (a job's, unbounded; delivery bookkeeping, with commits that do not
 * wait), then back.
 */
const sessions = new WeakMap<pg.PoolClient, Session>();

async function withSession(client: pg.PoolClient, wanted: Session, opened: Session): Promise<void> {
  const current = sessions.get(client) ?? opened;
  if (current.timeoutMs === wanted.timeoutMs && current.syncCommit === wanted.syncCommit) return;
  await client.query(
    `set statement_timeout = ${Math.trunc(wanted.timeoutMs)}; set synchronous_commit = ${wanted.syncCommit ? "on" : "off"}`,
  );
  sessions.set(client, wanted);
}

const RECONNECT_MS = 1000;

/**
 * LISTEN needs a connection of its own that stays open; it is opened on the first listen and
 * reopened (re-subscribing every channel) when it drops.
 */
class Listeners {
  readonly #handlers = new Map<string, Set<(payload: string) => void>>();
  #client: Promise<pg.Client> | undefined;
  #closed = false;

  constructor(private readonly options: PostgresOptions) {}

  async add(channel: string, onMessage: (payload: string) => void): Promise<() => Promise<void>> {
    let set = this.#handlers.get(channel);
    const client = await this.#connect();
    if (!set) {
      set = new Set();
      this.#handlers.set(channel, set);
      await client.query(`listen ${pg.escapeIdentifier(channel)}`);
    }
    set.add(onMessage);
    return async () => {
      set.delete(onMessage);
    };
  }

  #connect(): Promise<pg.Client> {
    this.#client ??= (async () => {
      const client = new pg.Client({ connectionString: this.options.connectionString });
      client.on("notification", (message) => {
        for (const handler of this.#handlers.get(message.channel) ?? []) handler(message.payload ?? "");
      });
      client.on("error", () => this.#reconnect());
      await client.connect();
      return client;
    })();
    return this.#client;
  }

  #reconnect(): void {
    const old = this.#client;
    this.#client = undefined;
    void old?.then((client) => client.end()).catch(() => undefined);
    if (this.#closed) return;
    setTimeout(() => {
      if (this.#closed) return;
      this.#connect()
        .then(async (client) => {
          for (const channel of this.#handlers.keys()) await client.query(`listen ${pg.escapeIdentifier(channel)}`);
        })
        .catch(() => this.#reconnect());
    }, RECONNECT_MS).unref();
  }

  async close(): Promise<void> {
    this.#closed = true;
    const client = this.#client;
    this.#client = undefined;
    if (client) await (await client).end().catch(() => undefined);
  }
}

/**
 * Every statement runs under `statement_timeout` (PostgreSQL cancels it, lock waits included; a
 * request gets a 503 and the connection stays usable), but those issued through `unbounded()`.
 */
export function openPostgres(options: PostgresOptions): Db {
  const statementTimeoutMs = Math.trunc(options.statementTimeoutMs ?? 0);
  const poolSize = options.max ?? 10;
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: poolSize,
    // JIT compiles a plan in seconds to save milliseconds: a loss for the short report queries
    // (measured: 3-8 s of a report's time on 10M rolled-up clicks). Parallel workers likewise:
    // starting them and gathering their rows cost more than they save on a query of a few hundred
    // thousand rows, and the requests running at once already share the cores (measured: a
    // 30-day account x source report at 10M clicks, 400 ms with 2 workers, 222 ms without).
    // The prepared statements (prepared.ts; a report's are never prepared) are planned once per
    // connection: left to choose, PostgreSQL re-plans one whose generic plan it cannot cost
    // (arrays of unknown length) at every call, which for the webhook snapshot's joins took 3-6 ms.
    options: `-c jit=off -c max_parallel_workers_per_gather=0 -c plan_cache_mode=force_generic_plan -c statement_timeout=${statementTimeoutMs}${options.schema === undefined ? "" : ` -c search_path=${options.schema},public`}`,
  });
  let closed = false;
  const listeners = new Listeners(options);
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  /**
   * A connection of the pool under `timeoutMs`, lent to `fn`. As pool.query does, a connection
   * that failed a statement outside a transaction is closed, not lent again (`closeOnError`), and
   * one that fails while lent never crashes the process.
   */
  async function lend<T>(
    session: Session,
    closeOnError: boolean,
    fn: (tx: Queryable, client: pg.PoolClient) => Promise<T>,
  ): Promise<T> {
    const client = await pool.connect();
    let broken: Error | undefined;
    const onError = (error: Error) => {
      broken = error;
    };
    client.on("error", onError);
    try {
      await withSession(client, session, opened);
      return await fn(queryable(client, session.timeoutMs), client);
    } catch (error) {
      if (closeOnError) broken ??= error instanceof Error ? error : new Error(String(error));
      throw error;
    } finally {
      client.removeListener("error", onError);
      client.release(broken);
    }
  }
  const opened: Session = { timeoutMs: statementTimeoutMs, syncCommit: true };
  /** The database, its statements under `session`. */
  const view = (session: Session): Db => ({
    kind: "postgres",
    poolSize,
    query: (text, params) => lend(session, true, (tx) => tx.query(text, params)),
    async transaction(fn) {
      return lend(session, false, async (tx, client) => {
        await client.query("begin");
        try {
          const result = await fn(tx);
          await client.query("commit");
          return result;
        } catch (error) {
          await client.query("rollback").catch(() => undefined);
          throw error;
        }
      });
    },
    exec: (script) => lend(session, true, (tx) => tx.exec(script)),
    listen: (channel, onMessage) => listeners.add(channel, onMessage),
    async close() {
      if (closed) return;
      closed = true;
      await listeners.close();
      await pool.end();
    },
    get closed() {
      return closed;
    },
    unbounded: () => unbounded,
    withoutFlushWait: () => relaxed,
  });
  const unbounded = view({ timeoutMs: 0, syncCommit: true });
  const relaxed = view({ timeoutMs: statementTimeoutMs, syncCommit: false });
  return view(opened);
}
