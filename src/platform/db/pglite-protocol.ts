/**
 * The messages between the service's thread and the thread that runs PGlite
 * (pglite.ts and pglite-worker.ts). Types only: both sides import it with `import type`.
 */

export interface WorkerOptions {
  dataDir?: string;
  /** A dump made by `dumpPglite`, as bytes (moved, not copied, to the worker). */
  loadDataDir?: ArrayBuffer;
  startParams: string[];
}

/** `tx` names the open transaction a statement belongs to; absent, it runs on its own. */
export type Request =
  | { id: number; op: "query"; text: string; params: unknown[]; tx?: number }
  | { id: number; op: "exec"; script: string; tx?: number }
  /** Answered once BEGIN has run, with the transaction's number. */
  | { id: number; op: "begin" }
  /** Answered once COMMIT (or ROLLBACK) has run. */
  | { id: number; op: "end"; tx: number; commit: boolean }
  /** Answered with the listener's number; its notifications arrive as `Notification`s. */
  | { id: number; op: "listen"; channel: string }
  | { id: number; op: "unlisten"; listener: number }
  | { id: number; op: "close" };

/** A request before it is numbered. */
export type RequestBody = Request extends infer R ? (R extends Request ? Omit<R, "id"> : never) : never;

/** An error's own fields (PostgreSQL's code, detail, constraint...), which a clone would drop. */
export interface ErrorFields {
  name: string;
  message: string;
  fields: Record<string, string | number | boolean | null>;
}

export type Reply =
  | { id: number; ok: true; value?: unknown }
  | { id: number; ok: false; error: ErrorFields }
  | { notify: number; payload: string }
  | { ready: true }
  | { ready: false; error: ErrorFields };
