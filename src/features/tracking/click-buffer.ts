import type { FastifyBaseLogger } from "fastify";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Clock } from "../../platform/clock.js";
import type { Db, Queryable } from "../../platform/db/index.js";
import { ClickSpill } from "./click-spill.js";
import type { Click } from "./click-writer.js";
import { agentDigestCache, isBotClick, type WriteClicksOptions, writeClicks } from "./click-writer.js";

/** SQLSTATE classes 22 (data exception) and 23 (constraint violation): the row, not the database. */
function isDataError(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return typeof code === "string" && (code.startsWith("22") || code.startsWith("23"));
}

/** Called for every written batch inside the transaction that writes it, with its people's clicks (no bot's). */
export type ClickHook = (tx: Queryable, clicks: Click[], now: Date) => Promise<void>;

export interface ClickBufferOptions {
  /** How often buffered clicks are written. */
  intervalMs?: number;
  /** Clicks per transaction; a full batch is written at once instead of waiting for the timer. */
  batchSize?: number;
  /** Estimated bytes of unwritten clicks held in memory (CLICK_BUFFER_MAX_BYTES). */
  maxBytes?: number;
  /** Where clicks beyond maxBytes wait for the database (DATA_DIR/click-spill); unset: refused. */
  spillDir?: string;
  /** Bytes of spilled clicks on disk (CLICK_SPILL_MAX_BYTES); beyond it clicks are refused. */
  spillMaxBytes?: number;
  /** Trackers a tenant's clicks may create per hour (TRACKERS_PER_TENANT_PER_HOUR); unset: no bound. */
  trackersPerTenantPerHour?: number;
}

const DEFAULT_MAX_BYTES = 64 * 1024 * 1024;
const DEFAULT_SPILL_MAX_BYTES = 1024 * 1024 * 1024;
// What a click costs beyond its strings: the object, its slots, the Date and the array slot.
// Measured (Node 20, heap after GC): a plain click 552 bytes (estimated 750); a crafted one with
// every parameter at its maximum 5.0 KB, 12.7 KB when its header strings keep their 8 KB
// headers alive (estimated 15.8 KB). Two bytes a character covers two-byte strings too.
const CLICK_OVERHEAD_BYTES = 512;
// A refused click is logged at most this often (with the count since the last line).
const REFUSAL_LOG_MS = 10_000;

/** An upper estimate of a click's heap size: the fixed part and two bytes per character. */
function clickBytes(click: Click): number {
  let chars = click.id.length + click.tenantId.length;
  for (const value of [
    click.trackerName,
    click.gclid,
    click.fbclid,
    click.msclkid,
    click.obclid,
    click.parameterA,
    click.parameterB,
    click.externalClickId,
    click.sourceClickId ?? null,
    click.userAgent,
    click.ip,
    click.country,
    click.referrer,
    click.device ?? null,
    click.os ?? null,
    click.browser ?? null,
  ]) {
    if (value !== null) chars += value.length;
  }
  let extra = 0;
  if (click.utm !== null) {
    extra += 64;
    for (const [key, value] of Object.entries(click.utm)) {
      chars += key.length + value.length;
      extra += 32;
    }
  }
  return CLICK_OVERHEAD_BYTES + extra + 2 * chars;
}

/**
 * Keeps the click route off the database: clicks are queued in memory and written in batches,
 * on a short timer, when a batch is full, and on shutdown. A failed write keeps its clicks
 * for the next attempt. Memory is bounded in bytes: beyond the bound (the database is away)
 * new clicks spill to disk and are replayed when it returns (see click-spill.ts); without a
 * spill directory, or with it full, they are refused (the visitor is still redirected) and
 * counted. Never an unbounded heap.
 */
export class ClickBuffer {
  private pending: Click[] = [];
  private pendingBytes = 0;
  private inFlight: Click[] = [];
  private inFlightBytes = 0;
  private chain: Promise<void> = Promise.resolve();
  private queued = false;
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;
  private readonly intervalMs: number;
  private readonly batchSize: number;
  private readonly maxBytes: number;
  private readonly writeOptions: WriteClicksOptions;
  private readonly spill: ClickSpill | null;
  /** The segment being replayed and how far. */
  private replaying: { file: string; offset: number } | null = null;
  private refusedSinceLog = 0;
  private lastRefusalLog = 0;
  /** Clicks written since start (replayed ones included). */
  written = 0;
  /** Clicks the database refused as data (a bad row), dropped one by one. */
  dropped = 0;
  /** Clicks beyond the memory bound written to the spill, and replayed from it. */
  spilled = 0;
  replayed = 0;
  /** Clicks not kept at all: memory bound reached and no room on disk. */
  refused = 0;

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    private readonly log: FastifyBaseLogger,
    options: ClickBufferOptions = {},
    private readonly hooks: readonly ClickHook[] = [],
  ) {
    this.intervalMs = options.intervalMs ?? 200;
    this.batchSize = options.batchSize ?? 2000;
    this.maxBytes = options.maxBytes ?? DEFAULT_MAX_BYTES;
    this.writeOptions = { trackersPerTenantPerHour: options.trackersPerTenantPerHour };
    this.spill =
      options.spillDir === undefined
        ? null
        : new ClickSpill(options.spillDir, options.spillMaxBytes ?? DEFAULT_SPILL_MAX_BYTES, log);
  }

  start(): void {
    if (this.timer) return;
    // Clicks spilled before a crash or a stop with the database away are replayed from here.
    if (this.spill && this.spill.maxBytes > 0) this.spill.open();
    this.timer = setInterval(() => {
      this.spill?.sync();
      if (this.pending.length > 0 || this.hasSpilled()) void this.flush();
    }, this.intervalMs);
    this.timer.unref();
  }

  add(click: Click): void {
    const bytes = clickBytes(click);
    if (this.pendingBytes + this.inFlightBytes + bytes > this.maxBytes) {
      this.overflow(click);
      return;
    }
    this.pending.push(click);
    this.pendingBytes += bytes;
    // After stop (a request that was already in flight) there is no timer: write it now.
    if (this.pending.length === this.batchSize || this.stopped) void this.flush();
  }

  private overflow(click: Click): void {
    if (this.spill?.append(click)) {
      this.spilled += 1;
      return;
    }
    this.refused += 1;
    this.refusedSinceLog += 1;
    const now = Date.now();
    if (now - this.lastRefusalLog >= REFUSAL_LOG_MS) {
      this.log.error(
        { refused: this.refusedSinceLog, bufferedBytes: this.bytes, spilledBytes: this.spill?.bytes ?? 0 },
        "click buffer full and no room to spill: clicks refused (visitors still redirected)",
      );
      this.lastRefusalLog = now;
      this.refusedSinceLog = 0;
    }
  }

  private hasSpilled(): boolean {
    return this.spill !== null && this.spill.bytes > 0;
  }

  /** True while the click is not yet written (it is waiting in memory or being written). */
  holds(clickId: string): boolean {
    return this.pending.some((c) => c.id === clickId) || this.inFlight.some((c) => c.id === clickId);
  }

  /** Clicks in memory not yet written. */
  get size(): number {
    return this.pending.length + this.inFlight.length;
  }

  /** Estimated bytes of the clicks in memory not yet written. */
  get bytes(): number {
    return this.pendingBytes + this.inFlightBytes;
  }

  /** Bytes of spilled clicks on disk waiting for replay. */
  get spilledBytes(): number {
    return this.spill?.bytes ?? 0;
  }

  /** Resolves once every click added before the call is written (or has failed to be, and waits). */
  flush(): Promise<void> {
    // One write queued at most: a database that hangs must not grow a promise per timer tick.
    if (!this.queued) {
      this.queued = true;
      this.chain = this.chain.then(() => {
        this.queued = false;
        return this.writePending();
      });
    }
    return this.chain;
  }

  /** Writes the clicks in memory, then replays spilled ones for about one interval. */
  private async writePending(): Promise<void> {
    while (this.pending.length > 0) {
      this.inFlight = this.pending.splice(0, this.batchSize);
      this.inFlightBytes = this.inFlight.reduce((sum, c) => sum + clickBytes(c), 0);
      this.pendingBytes -= this.inFlightBytes;
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
          this.pendingBytes += kept.reduce((sum, c) => sum + clickBytes(c), 0);
          this.log.error({ err: error, clicks: kept.length }, "writing clicks failed; will retry");
          return;
        }
      } finally {
        this.inFlight = [];
        this.inFlightBytes = 0;
      }
    }
    await this.replaySpilled();
  }

  /**
   * Writes spilled clicks back, oldest segment first, a batch at a time for up to one interval
   * (so that new clicks and flushes are not kept waiting); a segment is deleted only once all
   * of it is written. A failure leaves the position where it was, for the next flush.
   */
  private async replaySpilled(): Promise<void> {
    if (!this.spill?.available) return;
    const started = Date.now();
    while (Date.now() - started < this.intervalMs && this.pending.length < this.batchSize) {
      if (this.replaying === null) {
        const file = this.spill.nextSegment();
        if (file === null) return;
        this.replaying = { file, offset: 0 };
      }
      const { file, offset } = this.replaying;
      const read = await this.spill.read(file, offset, this.batchSize);
      if (read.skipped > 0)
        this.log.error({ file, lines: read.skipped }, "unreadable lines in the click spill skipped");
      if (read.clicks.length > 0) {
        // Clicks writeEach drops are counted as dropped, not as replayed.
        const droppedBefore = this.dropped;
        try {
          await this.write(read.clicks);
        } catch (error) {
          const kept = isDataError(error) ? await this.writeEach(read.clicks) : read.clicks;
          if (kept.length > 0) {
            this.log.error({ err: error, clicks: kept.length }, "replaying spilled clicks failed; will retry");
            return;
          }
        }
        this.replayed += read.clicks.length - (this.dropped - droppedBefore);
      }
      this.replaying = { file, offset: read.next };
      if (read.done) {
        this.spill.remove(file);
        this.replaying = null;
        this.log.info({ file, replayed: this.replayed }, "spilled clicks replayed");
      }
    }
  }

  private async write(batch: Click[]): Promise<void> {
    const now = this.clock.now();
    // A bot's click fires no click webhook or postback: the hooks see people's clicks only.
    const people = this.hooks.length === 0 ? batch : batch.filter((click) => !isBotClick(click));
    if (people.length === 0) await writeClicks(this.db, batch, now, this.writeOptions);
    else {
      await this.db.transaction(async (tx) => {
        await writeClicks(tx, batch, now, this.writeOptions);
        for (const hook of this.hooks) await hook(tx, people, now);
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

  /** Prometheus gauges and counters of this buffer (served at /metrics), read when scraped. */
  registerMetrics(registry: Registry): void {
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [registry],
        collect() {
          this.set(read());
        },
      });
    const counter = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers: [registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    gauge(
      "click_buffer_bytes",
      "Estimated bytes of unwritten clicks in memory (CLICK_BUFFER_MAX_BYTES)",
      () => this.bytes,
    );
    gauge("click_buffer_clicks", "Unwritten clicks in memory", () => this.size);
    gauge(
      "click_agent_digest_cache_bytes",
      "Estimated bytes of the user-agent digests kept for unique clicks (bounded at 1 MiB)",
      () => agentDigestCache().bytes,
    );
    gauge("click_agent_digest_cache_entries", "User agents whose digest is kept", () => agentDigestCache().entries);
    gauge("click_spill_bytes", "Bytes of spilled clicks on disk waiting for the database", () => this.spilledBytes);
    counter("clicks_spilled_total", "Clicks beyond the memory bound written to the spill file", () => this.spilled);
    counter("clicks_replayed_total", "Spilled clicks written to the database", () => this.replayed);
    counter("clicks_refused_total", "Clicks not kept: memory bound reached and no room to spill", () => this.refused);
    counter("clicks_dropped_total", "Clicks the database refused as bad data", () => this.dropped);
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
    // The database is still away: what fits goes to the spill, replayed at the next start.
    const unwritten = this.pending.splice(0);
    this.pendingBytes = 0;
    const lost = unwritten.filter((click) => !this.spill?.append(click));
    if (unwritten.length > lost.length) {
      this.spilled += unwritten.length - lost.length;
      this.log.warn(
        { clicks: unwritten.length - lost.length },
        "clicks spilled to disk at shutdown; replayed at the next start",
      );
    }
    this.spill?.close();
    if (lost.length > 0) {
      this.refused += lost.length;
      this.log.error({ clicks: lost.length }, "clicks could not be written before shutdown");
    }
  }
}
