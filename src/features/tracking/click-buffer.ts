import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import type { Db, Queryable } from "../../platform/db/index.js";
import type { Click } from "./click-writer.js";
import { writeClicks } from "./click-writer.js";

/** SQLSTATE classes 22 (data exception) and 23 (constraint violation): the row, not the database. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}

/** Called for every written batch inside the transaction that writes it. */
export type ClickHook = (tx: Queryable, clicks: Click[], now: Date) => Promise<void>;

export interface ClickBufferOptions {
  /** How often buffered clicks are written. */
  intervalMs?: number;
  /** Clicks per transaction; a full batch is written at once instead of waiting for the timer. */
  batchSize?: number;
  /** Past this many unwritten clicks (the database is down) the oldest are dropped and logged. */
  maxPending?: number;
}

/**
 * Keeps the click route off the database: clicks are queued in memory and written in batches,
 * on a short timer, when a batch is full, and on shutdown. A failed write keeps its clicks
 * for the next attempt.
 */
export class ClickBuffer {
  private pending: Click[] = [];
  private inFlight: Click[] = [];
  private chain: Promise<void> = Promise.resolve();
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxPending: number;
  /** Clicks written since start and dropped because the database stayed down. */
  written = 0;
  dropped = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    options: ClickBufferOptions = {},
    private readonly hooks: readonly ClickHook[] = [],
  ) {
    this.intervalMs = options.intervalMs ?? 200;
    this.batchSize = options.batchSize ?? 2000;
    this.maxPending = options.maxPending ?? 500_000;
  }

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.pending.length > 0) void this.flush();
    }, this.intervalMs);
    this.timer.unref();
  }

  add(click: Click): void {
    this.pending.push(click);
    if (this.pending.length > this.maxPending) {
      const dropped = this.pending.splice(0, this.pending.length - this.maxPending);
      this.dropped += dropped.length;
      this.log.error({ dropped: dropped.length }, "click buffer full: the database is not taking writes");
    }
    // After stop (a request that was already in flight) there is no timer: write it now.
    if (this.pending.length === this.batchSize || this.stopped) void this.flush();
  }

  /** True while the click is not yet written (it is waiting or being written). */
  holds(clickId: string): boolean {
    return this.pending.some((c) => c.id === clickId) || this.inFlight.some((c) => c.id === clickId);
  }

  get size(): number {
    return this.pending.length + this.inFlight.length;
  }

  /** Resolves once every click added before the call is written (or has failed to be, and waits). */
  flush(): Promise<void> {
    this.chain = this.chain.then(() => this.writePending());
    return this.chain;
  }

  private async writePending(): Promise<void> {
    while (this.pending.length > 0) {
      this.inFlight = this.pending.splice(0, this.batchSize);
      const batch = this.inFlight;
      try {
        await this.write(batch);
      } catch (error) {
        // A row the database refuses must not block every click behind it: write the batch one
        // click at a time and drop only the refused ones. Anything else (the database is
        // away) keeps the batch, oldest first, for the next flush.
        const kept = isDataError(error) ? await this.writeEach(batch) : batch;
        if (kept.length > 0) {
          this.pending.unshift(...kept);
          this.log.error({ err: error, clicks: kept.length }, "writing clicks failed; will retry");
          return;
        }
      } finally {
        this.inFlight = [];
      }
    }
  }

  private async write(batch: Click[]): Promise<void> {
    const now = this.clock.now();
    if (this.hooks.length === 0) await writeClicks(this.db, batch, now);
    else {
      await this.db.transaction(async (tx) => {
        await writeClicks(tx, batch, now);
        for (const hook of this.hooks) await hook(tx, batch, now);
      });
    }
    this.written += batch.length;
  }

  /** Writes clicks one by one; returns those not written because the database went away. */
  private async writeEach(batch: Click[]): Promise<Click[]> {
    for (const [i, click] of batch.entries()) {
      try {
        await this.write([click]);
      } catch (error) {
        if (!isDataError(error)) return batch.slice(i);
        this.dropped += 1;
        this.log.error({ err: error, clickId: click.id }, "click refused by the database; dropped");
      }
    }
    return [];
  }

  /** Stops the timer and writes everything still buffered (called on graceful shutdown). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (let attempt = 0; attempt < 5 && this.pending.length > 0; attempt++) {
      await this.flush();
      if (this.pending.length > 0) await new Promise((resolve) => setTimeout(resolve, 200 * (attempt + 1)));
    }
    this.stopped = true;
    if (this.pending.length > 0) {
      this.log.error({ clicks: this.pending.length }, "clicks could not be written before shutdown");
    }
  }
}
