import pg from "pg";
import type { Db, Queryable } from "./types.js";

interface PostgresOptions {
  connectionString: string;
  /** Schema to put first on the search path (tests isolate each file in its own schema). */
  schema?: string;
  max?: number;
}

// int8 and numeric arrive as strings by default; counts and ids fit in a JS number.
pg.types.setTypeParser(pg.types.builtins.INT8, (value) => Number(value));

function queryable(client: pg.Pool | pg.PoolClient): Queryable {
  return {
    async query<T extends object>(text: string, params: readonly unknown[] = []) {
      const result = await client.query<T>(text, params as unknown[]);
      return result.rows;
    },
    async exec(script) {
      await client.query(script);
    },
  };
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

export function openPostgres(options: PostgresOptions): Db {
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.max ?? 10,
    // JIT compiles a plan in seconds to save milliseconds: a loss for the short report queries
    // (measured: 3-8 s of a report's time on 10M rolled-up clicks). Parallel workers likewise:
    // starting them and gathering their rows cost more than they save on a query of a few hundred
    // thousand rows, and the requests running at once already share the cores (measured: a
    // 30-day account x source report at 10M clicks, 400 ms with 2 workers, 222 ms without).
    options: `-c jit=off -c max_parallel_workers_per_gather=0${options.schema === undefined ? "" : ` -c search_path=${options.schema},public`}`,
  });
  let closed = false;
  const listeners = new Listeners(options);
  // An idle client losing its connection must not crash the process; the next query reconnects.
  pool.on("error", () => undefined);
  const base = queryable(pool);
  return {
    kind: "postgres",
    query: base.query,
    async transaction(fn) {
      const client = await pool.connect();
      try {
        await client.query("begin");
        const result = await fn(queryable(client));
        await client.query("commit");
        return result;
      } catch (error) {
        await client.query("rollback").catch(() => undefined);
        throw error;
      } finally {
        client.release();
      }
    },
    exec: base.exec,
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
  };
}
