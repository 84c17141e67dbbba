import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { lockDirectory } from "../dir-lock.js";
import type { Db, Queryable } from "./types.js";

interface PgliteOptions {
  /** Directory for the data files; memory when absent. */
  dataDir?: string;
  /** A dump made by `dumpDataDir` to start from (tests copy a migrated template). */
  loadDataDir?: Blob | File;
}

type PgliteTx = Pick<PGlite, "query" | "exec">;

/*
 * PGlite's PostgreSQL runs inside this process's WebAssembly memory, which grows and never
 * shrinks: every page it touches stays resident. Its defaults are a server's (128 MB of shared
 * buffers, 64 MB for maintenance): measured, 130 MB of the embedded node's 550 MB at rest.
 * Its data files live in the operating system's page cache anyway (NODEFS), so a small buffer
 * pool costs a read call, not a disk read. Appended to PGlite's own start parameters (which
 * set single-user mode and must stay first). docs/limits.md, "Embedded database memory".
 */
const PGLITE_SETTINGS = {
  shared_buffers: "16MB",
  maintenance_work_mem: "16MB",
  work_mem: "4MB",
  temp_buffers: "4MB",
  wal_buffers: "1MB",
} as const;

function startParams(): string[] {
  return [
    ...PGlite.defaultStartParams,
    ...Object.entries(PGLITE_SETTINGS).flatMap(([name, value]) => ["-c", `${name}=${value}`]),
  ];
}

function queryable(target: PgliteTx): Queryable {
  return {
    async query<T extends object>(text: string, params: readonly unknown[] = []) {
      const result = await target.query<T>(text, params as unknown[]);
      return result.rows;
    },
    async exec(script) {
      await target.exec(script);
    },
  };
}

export async function openPglite(options: PgliteOptions = {}): Promise<Db> {
  // PGlite is one process's database: a second process on the same files would answer writes
  // that the first one then overwrites (and may crash). Refuse it before touching the files.
  const lock = options.dataDir === undefined ? undefined : lockDirectory(options.dataDir);
  let pg: PGlite;
  try {
    pg = await PGlite.create({
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
      ...(options.loadDataDir === undefined ? {} : { loadDataDir: options.loadDataDir }),
      extensions: { pg_trgm },
      startParams: startParams(),
    });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const base = queryable(pg);
  return {
    kind: "pglite",
    query: base.query,
    transaction: (fn) => pg.transaction((tx) => fn(queryable(tx))),
    exec: base.exec,
    async listen(channel, onMessage) {
      return pg.listen(channel, onMessage);
    },
    async close() {
      try {
        if (!pg.closed) await pg.close();
      } finally {
        lock?.release();
      }
    },
    get closed() {
      return pg.closed;
    },
    // No statement timeout to lift: PGlite runs each statement to its end on this thread, where
    // no timer can interrupt it (it accepts statement_timeout and ignores it; docs/limits.md).
    unbounded(this: Db) {
      return this;
    },
  };
}

/** A copy of a database's files, for starting many databases from one migrated template. */
export async function dumpPglite(dataDir: string): Promise<Blob> {
  const lock = lockDirectory(dataDir);
  try {
    const pg = await PGlite.create({ dataDir, extensions: { pg_trgm } });
    try {
      return await pg.dumpDataDir("none");
    } finally {
      await pg.close();
    }
  } finally {
    lock.release();
  }
}
