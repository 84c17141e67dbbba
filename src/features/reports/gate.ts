import type { FastifyReply } from "fastify";
import { ApiError } from "../../platform/http/errors.js";

/** The bounds of a ReportGate (docs/limits.md, "Reports and MCP: fair share"). */
export interface ReportGateOptions {
  /** Reports (or MCP posts that run reports) one tenant may have running at once on this node. */
  perTenant: number;
  /** Reports of one tenant that may wait for a slot; beyond them the tenant is refused (429). */
  queuePerTenant: number;
  /**
   * Reports of every tenant together running at once: the database pool's size less a reserve,
   * so cheap requests of everyone else always find a connection. Infinity where there is no pool.
   */
  totalSlots: number;
}

/** A report refused because its tenant already runs and queues as many as it may. */
export class ReportsBusy extends Error {
  constructor(
    message: string,
    /** Seconds after which a slot is likely free (the Retry-After of the 429). */
    readonly retryAfterS: number,
  ) {
    super(message);
    this.name = "ReportsBusy";
  }

  /** The 429 in the envelope, Retry-After set on `reply` (as every other 429 of the API). */
  toApiError(reply: FastifyReply): ApiError {
    reply.header("retry-after", this.retryAfterS);
    return new ApiError("rate_limited", this.message);
  }
}

interface TenantState {
  running: number;
  waiting: number;
}

interface Waiter {
  tenantId: string;
  grant: () => void;
}

// Retry-After is an estimate of when a slot frees: the recent run time of a report times the
// tenant's reports ahead, at least 1 s, at most a minute (a report's statements run at most
// STATEMENT_TIMEOUT_MS on PostgreSQL).
const FIRST_ESTIMATE_MS = 1000;
const MAX_RETRY_AFTER_S = 60;

/**
 * Fair share of the database for reports and composites: at most `perTenant` of one tenant's
 * reports run at once and `queuePerTenant` wait (first come, first served), the rest are refused
 * at once with a 429 that costs no database work; and all tenants' reports together hold at most
 * `totalSlots` of the pool's connections. A report holds at most one connection at a time (its
 * statements run one after another), so the slots bound the connections. Memory is bounded: a
 * tenant's state lives only while it runs or queues something, and the queue of waiters holds
 * at most `queuePerTenant` entries per such tenant.
 */
export class ReportGate {
  readonly #tenants = new Map<string, TenantState>();
  readonly #queue: Waiter[] = [];
  #running = 0;
  #averageMs = FIRST_ESTIMATE_MS;

  constructor(readonly options: ReportGateOptions) {}

  /** Runs `fn` in a slot of the tenant's share; throws ReportsBusy when its queue is full too. */
  async run<T>(tenantId: string, fn: () => Promise<T>): Promise<T> {
    const release = await this.enter(tenantId);
    try {
      return await fn();
    } finally {
      release();
    }
  }

  /** Waits for a slot (or throws ReportsBusy at once); the returned function gives it back, once. */
  async enter(tenantId: string): Promise<() => void> {
    let state = this.#tenants.get(tenantId);
    if (!state) {
      state = { running: 0, waiting: 0 };
      this.#tenants.set(tenantId, state);
    }
    if (!this.#canStart(state)) {
      if (state.waiting >= this.options.queuePerTenant) {
        this.#forgetIfIdle(tenantId, state);
        const { perTenant, queuePerTenant } = this.options;
        throw new ReportsBusy(
          `Too many reports at once for this tenant: ${perTenant} run and ${queuePerTenant} wait at most; retry later`,
          this.#retryAfterS(),
        );
      }
      state.waiting += 1;
      await new Promise<void>((grant) => this.#queue.push({ tenantId, grant }));
    } else {
      this.#start(state);
    }
    const started = performance.now();
    let released = false;
    return () => {
      if (released) return;
      released = true;
      // An average over about the last ten runs: the estimate follows the load.
      this.#averageMs += (performance.now() - started - this.#averageMs) / 10;
      this.#running -= 1;
      const current = this.#tenants.get(tenantId);
      if (current) {
        current.running -= 1;
        this.#forgetIfIdle(tenantId, current);
      }
      this.#dispatch();
    };
  }

  /** Reports running now, all tenants together (tests, metrics). */
  get running(): number {
    return this.#running;
  }

  #canStart(state: TenantState): boolean {
    return state.running < this.options.perTenant && this.#running < this.options.totalSlots;
  }

  #start(state: TenantState): void {
    state.running += 1;
    this.#running += 1;
  }

  /** Starts the oldest waiters whose tenant has a free slot, while the pool's share has one. */
  #dispatch(): void {
    for (let i = 0; i < this.#queue.length && this.#running < this.options.totalSlots; ) {
      const waiter = this.#queue[i] as Waiter;
      const state = this.#tenants.get(waiter.tenantId);
      if (state && state.running < this.options.perTenant) {
        this.#queue.splice(i, 1);
        state.waiting -= 1;
        this.#start(state);
        waiter.grant();
      } else i += 1;
    }
  }

  #forgetIfIdle(tenantId: string, state: TenantState): void {
    if (state.running === 0 && state.waiting === 0) this.#tenants.delete(tenantId);
  }

  #retryAfterS(): number {
    const { perTenant, queuePerTenant } = this.options;
    const aheadMs = (this.#averageMs * (perTenant + queuePerTenant)) / perTenant;
    return Math.min(MAX_RETRY_AFTER_S, Math.max(1, Math.ceil(aheadMs / 1000)));
  }
}

/**
 * The share of a pool of `poolSize` connections reports may hold: all but `reserve`, at least
 * one. Without a pool (the embedded database runs one statement at a time, whoever asks), no cap.
 */
export function reportSlots(poolSize: number | undefined, reserve: number): number {
  return poolSize === undefined ? Number.POSITIVE_INFINITY : Math.max(1, poolSize - reserve);
}
