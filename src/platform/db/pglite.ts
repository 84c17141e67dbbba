import { createHash } from "node:crypto";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";
import { Worker } from "node:worker_threads";
import { PGlite } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import { lockDirectory } from "../dir-lock.js";
import type { ErrorFields, Reply, RequestBody, WorkerOptions } from "./pglite-protocol.js";
import { type Statement, statementText } from "./prepared.js";
import type { Db, Queryable } from "./types.js";

interface PgliteOptions {
  /** Directory for the data files; memory when absent. */
  dataDir?: string;
  /** A dump made by `dumpDataDir` to start from (tests copy a migrated template). */
  loadDataDir?: Blob | File;
}

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

/*
 * PGlite runs each statement to its end on the thread that calls it, with no way to interrupt
 * it: on the service's own thread, one long report statement held every request, /api/health
 * included. It runs on a worker thread instead (pglite-worker.ts), and this thread only sends
 * it statements and waits for their rows, answering other requests meanwhile. Rows and
 * parameters cross as structured clones (Dates, bigints, byte arrays and nested objects arrive
 * as they left); errors cross as their fields, rebuilt here with PostgreSQL's code and detail.
 * docs/architecture.md, "The embedded database's thread".
 */

/**
 * The worker's entry beside this file: JavaScript in dist/ (npm start); from the sources (tests,
 * scripts under tsx) the TypeScript file, loaded through tsx's hooks, which a worker does not
 * inherit from its parent: it registers them first (by path, whatever the cwd).
 */
function workerEntry(): { entry: string | URL; eval: boolean } {
  if (!import.meta.url.endsWith(".ts")) return { entry: new URL("./pglite-worker.js", import.meta.url), eval: false };
  const tsxApi = createRequire(import.meta.url)
    .resolve("tsx/esm/api")
    .replace(/\.cjs$/, ".mjs");
  const target = new URL("./pglite-worker.ts", import.meta.url).href;
  const code = `import(${JSON.stringify(pathToFileURL(tsxApi).href)})
    .then((tsx) => { tsx.register(); return import(${JSON.stringify(target)}); })`;
  return { entry: code, eval: true };
}

function rebuild(error: ErrorFields): Error {
  const rebuilt = Object.assign(new Error(error.message), error.fields);
  rebuilt.name = error.name;
  return rebuilt;
}

/** A request waiting for the database, or the one it runs. */
interface Queued {
  id: number;
  request: RequestBody;
  /** The statement's text (or its hash, when long): what its past runs are known by. */
  key: string | undefined;
  /** How long it is expected to run, from its past runs (0 when never seen). */
  expectedMs: number;
  queuedAt: number;
  sentAt: number;
  resolve(value: unknown): void;
  reject(error: Error): void;
}

/** Statements whose run time is remembered (the longest key is KEY_CHARS): a bounded map. */
const KNOWN_STATEMENTS = 1000;
const KEY_CHARS = 256;
/** The weight of a statement's latest run in its expected time. */
const LATEST_WEIGHT = 0.3;

function keyOf(request: RequestBody): string | undefined {
  const text = request.op === "query" ? request.text : request.op === "exec" ? request.script : undefined;
  if (text === undefined) return undefined;
  return text.length <= KEY_CHARS ? text : createHash("sha256").update(text).digest("base64");
}

/**
 * The service thread's end of the worker. The database runs one statement at a time, so it is
 * sent one at a time, and the next is chosen here rather than first come, first served: the one
 * expected to end soonest (by the statement's past runs), less the time it has waited. A cheap
 * request's statements then pass a report's queued ones, which wait at most about their own
 * run time for them (so are at most about twice as slow under a stream of cheap ones): another
 * tenant's request waits for the one statement under way, not for every statement of a report.
 * While a transaction is open only its statements are sent: nothing runs inside it.
 */
class WorkerClient {
  readonly #worker: Worker;
  readonly #queue: Queued[] = [];
  #running: Queued | undefined;
  /** The transaction holding the database, from its BEGIN's answer to its end's. */
  #openTx: number | undefined;
  #openTxSince = 0;
  readonly #expected = new Map<string, number>();
  readonly #listeners = new Map<number, (payload: string) => void>();
  #nextId = 1;
  /** Why the worker can take no more requests (closed, or it stopped), once it cannot. */
  #gone: Error | undefined;

  private constructor(worker: Worker) {
    this.#worker = worker;
    worker.on("message", (reply: Reply) => this.#receive(reply));
    worker.on("error", (error) => this.#stop(error));
    worker.on("exit", (code) => this.#stop(new Error(`the embedded database's thread exited (code ${code})`)));
  }

  static async start(options: WorkerOptions): Promise<WorkerClient> {
    const { entry, eval: isCode } = workerEntry();
    const worker = new Worker(entry, {
      eval: isCode,
      workerData: options,
      transferList: options.loadDataDir === undefined ? [] : [options.loadDataDir],
    });
    await new Promise<void>((resolve, reject) => {
      const onMessage = (reply: Reply) => {
        if (!("ready" in reply)) return;
        cleanup();
        if (reply.ready) resolve();
        else reject(rebuild(reply.error));
      };
      const onError = (error: Error) => {
        cleanup();
        reject(error);
      };
      const onExit = (code: number) => {
        cleanup();
        reject(new Error(`the embedded database's thread exited while starting (code ${code})`));
      };
      const cleanup = () => {
        worker.off("message", onMessage).off("error", onError).off("exit", onExit);
      };
      worker.on("message", onMessage).on("error", onError).on("exit", onExit);
    }).catch(async (error: unknown) => {
      await worker.terminate();
      throw error;
    });
    const client = new WorkerClient(worker);
    // Idle, the worker does not keep the process alive (as PGlite on this thread did not);
    // a request waiting or under way does (#settled, request).
    worker.unref();
    return client;
  }

  get gone(): boolean {
    return this.#gone !== undefined;
  }

  /** When the statement or transaction holding the database began; undefined when none does. */
  get busySince(): number | undefined {
    return this.#openTx === undefined ? this.#running?.sentAt : this.#openTxSince;
  }

  /** Requests waiting or under way. */
  get inFlight(): number {
    return this.#queue.length + (this.#running === undefined ? 0 : 1);
  }

  request<T>(request: RequestBody): Promise<T> {
    if (this.#gone) return Promise.reject(new Error(`PGlite is closed (${this.#gone.message})`));
    return new Promise<T>((resolve, reject) => {
      if (this.inFlight === 0) this.#worker.ref();
      const key = keyOf(request);
      this.#queue.push({
        id: this.#nextId++,
        request,
        key,
        expectedMs: key === undefined ? 0 : (this.#expected.get(key) ?? 0),
        queuedAt: performance.now(),
        sentAt: 0,
        resolve: resolve as (value: unknown) => void,
        reject,
      });
      this.#next();
    });
  }

  onNotify(listener: number, handler: (payload: string) => void): void {
    this.#listeners.set(listener, handler);
  }

  offNotify(listener: number): void {
    this.#listeners.delete(listener);
  }

  async close(): Promise<void> {
    if (this.#gone) return;
    try {
      await this.request({ op: "close" });
    } finally {
      this.#gone ??= new Error("closed");
      await this.#worker.terminate();
    }
  }

  /** The index in the queue of the request to send next, or -1 when none may go now. */
  #choose(): number {
    const open = this.#openTx;
    if (open !== undefined) return this.#queue.findIndex((q) => "tx" in q.request && q.request.tx === open);
    const now = performance.now();
    let best = -1;
    let bestScore = Number.POSITIVE_INFINITY;
    for (let i = 0; i < this.#queue.length; i++) {
      const q = this.#queue[i] as Queued;
      // Closing goes last: every statement asked for before it runs first.
      if (q.request.op === "close" && this.#queue.length > 1) continue;
      const score = q.expectedMs - (now - q.queuedAt);
      if (score < bestScore) {
        best = i;
        bestScore = score;
      }
    }
    return best;
  }

  /** Sends the next request unless one is under way. */
  #next(): void {
    while (this.#running === undefined && this.#gone === undefined) {
      const index = this.#choose();
      if (index < 0) return;
      const [next] = this.#queue.splice(index, 1) as [Queued];
      try {
        next.sentAt = performance.now();
        this.#worker.postMessage({ ...next.request, id: next.id });
        this.#running = next;
      } catch (error) {
        // A parameter that cannot be cloned (a function): refused as the statement would be.
        next.reject(error as Error);
        this.#settled();
      }
    }
  }

  #settled(): void {
    if (this.inFlight === 0) this.#worker.unref();
  }

  #learn(q: Queued): void {
    if (q.key === undefined) return;
    const took = performance.now() - q.sentAt;
    const before = this.#expected.get(q.key);
    this.#expected.delete(q.key);
    this.#expected.set(q.key, before === undefined ? took : before * (1 - LATEST_WEIGHT) + took * LATEST_WEIGHT);
    if (this.#expected.size > KNOWN_STATEMENTS) {
      const oldest = this.#expected.keys().next().value;
      if (oldest !== undefined) this.#expected.delete(oldest);
    }
  }

  #receive(reply: Reply): void {
    if ("notify" in reply) {
      this.#listeners.get(reply.notify)?.(reply.payload);
      return;
    }
    if (!("id" in reply)) return;
    const running = this.#running;
    if (running === undefined || running.id !== reply.id) return;
    this.#running = undefined;
    this.#learn(running);
    if (running.request.op === "begin" && reply.ok) {
      this.#openTx = reply.value as number;
      this.#openTxSince = running.sentAt;
    }
    // Its end settles the transaction either way (COMMIT, or ROLLBACK when that failed).
    if (running.request.op === "end") this.#openTx = undefined;
    this.#settled();
    if (reply.ok) running.resolve(reply.value);
    else running.reject(rebuild(reply.error));
    this.#next();
  }

  #stop(reason: Error): void {
    this.#gone ??= reason;
    const failed = new Error(`PGlite is closed (${reason.message})`);
    for (const q of [...(this.#running ? [this.#running] : []), ...this.#queue.splice(0)]) q.reject(failed);
    this.#running = undefined;
    this.#listeners.clear();
  }
}

function queryable(client: WorkerClient, tx?: number): Queryable {
  const where = tx === undefined ? {} : { tx };
  return {
    query<T extends object>(statement: Statement, params: readonly unknown[] = []) {
      return client.request<T[]>({ op: "query", text: statementText(statement), params: [...params], ...where });
    },
    async exec(script) {
      await client.request({ op: "exec", script, ...where });
    },
  };
}

export async function openPglite(options: PgliteOptions = {}): Promise<Db> {
  // PGlite is one process's database: a second process on the same files would answer writes
  // that the first one then overwrites (and may crash). Refuse it before touching the files.
  const lock = options.dataDir === undefined ? undefined : lockDirectory(options.dataDir);
  let client: WorkerClient;
  try {
    client = await WorkerClient.start({
      ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
      ...(options.loadDataDir === undefined ? {} : { loadDataDir: await options.loadDataDir.arrayBuffer() }),
      startParams: startParams(),
    });
  } catch (error) {
    lock?.release();
    throw error;
  }
  const base = queryable(client);
  return {
    kind: "pglite",
    query: base.query,
    async transaction(fn) {
      const tx = await client.request<number>({ op: "begin" });
      let result: Awaited<ReturnType<typeof fn>>;
      try {
        result = await fn(queryable(client, tx));
      } catch (error) {
        await client.request({ op: "end", tx, commit: false }).catch(() => undefined);
        throw error;
      }
      await client.request({ op: "end", tx, commit: true });
      return result;
    },
    busySince: () => client.busySince,
    exec: base.exec,
    async listen(channel, onMessage) {
      const listener = await client.request<number>({ op: "listen", channel });
      client.onNotify(listener, onMessage);
      return async () => {
        client.offNotify(listener);
        if (!client.gone) await client.request({ op: "unlisten", listener });
      };
    },
    async close() {
      try {
        await client.close();
      } finally {
        lock?.release();
      }
    },
    get closed() {
      return client.gone;
    },
    // No statement timeout to lift: PGlite runs each statement to its end on its thread, where
    // no timer can interrupt it (it accepts statement_timeout and ignores it; docs/limits.md).
    unbounded(this: Db) {
      return this;
    },
    // One process, one connection: there are no other commits for these to queue behind.
    withoutFlushWait(this: Db) {
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
