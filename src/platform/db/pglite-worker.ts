/**
 * The thread that runs the embedded database (started by pglite.ts). PGlite runs each statement
 * to its end on the thread that calls it; here that thread is not the one answering HTTP, so a
 * long report statement delays only the statements queued behind it, not every request.
 *
 * Requests are handled as they arrive: PGlite itself runs one statement or one transaction at a
 * time (its transaction lock), so a transaction's statements run in order with nothing else in
 * between, and other statements and transactions wait for it.
 */
import { parentPort, workerData } from "node:worker_threads";
import { PGlite, type Transaction } from "@electric-sql/pglite";
import { pg_trgm } from "@electric-sql/pglite/contrib/pg_trgm";
import type { ErrorFields, Reply, Request, WorkerOptions } from "./pglite-protocol.js";

const port = parentPort;
if (!port) throw new Error("pglite-worker.ts runs as a worker thread (started by pglite.ts)");

function fieldsOf(error: unknown): ErrorFields {
  if (!(error instanceof Error)) return { name: "Error", message: String(error), fields: {} };
  const fields: ErrorFields["fields"] = {};
  for (const [key, value] of Object.entries(error)) {
    if (value === null || ["string", "number", "boolean"].includes(typeof value)) {
      fields[key] = value as string | number | boolean | null;
    }
  }
  return { name: error.name, message: error.message, fields };
}

function send(reply: Reply): void {
  port?.postMessage(reply);
}

const options = workerData as WorkerOptions;
let pg: PGlite;
try {
  pg = await PGlite.create({
    ...(options.dataDir === undefined ? {} : { dataDir: options.dataDir }),
    ...(options.loadDataDir === undefined ? {} : { loadDataDir: new Blob([options.loadDataDir]) }),
    extensions: { pg_trgm },
    startParams: options.startParams,
  });
} catch (error) {
  send({ ready: false, error: fieldsOf(error) });
  throw error;
}

/** An open transaction, and how to end it (the promise its callback waits on). */
interface OpenTx {
  tx: Transaction;
  end(commit: boolean): void;
  /** Settles once COMMIT or ROLLBACK has run. */
  done: Promise<void>;
}
const transactions = new Map<number, OpenTx>();
const listeners = new Map<number, () => Promise<void>>();
let nextNumber = 1;
/** Thrown inside the transaction's callback: PGlite then rolls back. */
const ROLLBACK = Symbol("rollback");

function target(tx: number | undefined): PGlite | Transaction {
  if (tx === undefined) return pg;
  const open = transactions.get(tx);
  if (!open) throw new Error(`transaction ${tx} is not open`);
  return open.tx;
}

function begin(): Promise<number> {
  const number = nextNumber++;
  return new Promise<number>((began, failed) => {
    let end!: (commit: boolean) => void;
    const decided = new Promise<boolean>((resolve) => {
      end = resolve;
    });
    const done = pg
      .transaction(async (tx) => {
        transactions.set(number, { tx, end, done });
        began(number);
        if (!(await decided)) throw ROLLBACK;
      })
      .then(
        () => undefined,
        (error: unknown) => {
          if (error !== ROLLBACK) throw error;
        },
      )
      .finally(() => transactions.delete(number));
    // BEGIN itself failed: the callback never ran.
    done.catch(failed);
  });
}

async function handle(request: Request): Promise<unknown> {
  switch (request.op) {
    case "query":
      return (await target(request.tx).query(request.text, request.params)).rows;
    case "exec":
      await target(request.tx).exec(request.script);
      return undefined;
    case "begin":
      return begin();
    case "end": {
      const open = transactions.get(request.tx);
      if (!open) throw new Error(`transaction ${request.tx} is not open`);
      open.end(request.commit);
      await open.done;
      return undefined;
    }
    case "listen": {
      const number = nextNumber++;
      listeners.set(number, await pg.listen(request.channel, (payload) => send({ notify: number, payload })));
      return number;
    }
    case "unlisten": {
      const unlisten = listeners.get(request.listener);
      listeners.delete(request.listener);
      await unlisten?.();
      return undefined;
    }
    case "close":
      if (!pg.closed) await pg.close();
      return undefined;
  }
}

port.on("message", (request: Request) => {
  handle(request).then(
    (value) => send({ id: request.id, ok: true, value }),
    (error: unknown) => send({ id: request.id, ok: false, error: fieldsOf(error) }),
  );
});
send({ ready: true });
