/** Messages between the benchmark and its service process (service-process.ts). */

export interface Catalog {
  tenantId: string;
  linkId: number;
  brandId: number;
  programId: number;
  accountId: number;
  trafficSourceId: number;
}

/** CPU time of the process so far, from process.cpuUsage(). */
export interface Cpu {
  userUs: number;
  systemUs: number;
}

/** Clicks recorded without the route: what adding them to the buffer and writing them cost. */
export interface Recorded {
  clicks: number;
  /** The buffer's add() for every click: estimate its bytes, queue it. */
  bufferUs: number;
  /** Writing them (batches, trackers, the statement, the click hooks), up to the last commit. */
  writeUs: number;
  /** The same in wall time. */
  writeWallMs: number;
}

/** Where one batch's statement spends its time inside the database, by CTE (EXPLAIN ANALYZE). */
export interface Explained {
  clicks: number;
  executionMs: number;
  /** Planning the statement, once per batch (it is not prepared). */
  planningMs: number;
  /** Exclusive time of the plan's nodes, summed by the CTE (or the final select) they belong to. */
  byStep: Record<string, number>;
}

/** The click facts' lookups (click-facts) alone, in the service process: CPU per call. */
export interface FactsCost {
  lookups: number;
  /** clickFacts() with a different public address each time and the load's (cached) user agent. */
  perClickUs: number;
  /** The same with a user agent never seen before: bowser and isbot parse it. */
  newAgentUs: number;
}

export type FromParent =
  | { type: "cpu" }
  | { type: "facts"; lookups: number }
  | { type: "flush" }
  | { type: "record"; clicks: number }
  | { type: "explain"; clicks: number }
  | { type: "stop" };

export type ToParent =
  | { type: "ready"; url: string; catalog?: Catalog }
  | ({ type: "cpu"; written: number } & Cpu)
  | { type: "flushed"; written: number }
  | ({ type: "recorded" } & Recorded)
  | ({ type: "explained" } & Explained)
  | ({ type: "facts" } & FactsCost)
  | { type: "stopped"; stored: number; rolledUp: number; written: number; dropped: number }
  | { type: "failed"; message: string };
