import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { Gauge, Counter as PromCounter, type Registry } from "prom-client";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { MINUTE_MS } from "../../platform/durations.js";

export interface UsageEntry {
  tenantId: string;
  tokenId: string;
  method: string;
  route: string;
  status: number;
  ip: string;
  at: Date;
}

const FLUSH_MS = 1000;
const FLUSH_AT = 500;
// After a failed write the next one waits this long, however many counters arrive meanwhile.
const RETRY_MS = FLUSH_MS * 5;
const DEFAULT_MAX_BYTES = 16 * 1024 * 1024;
// A counter's cost beyond its key: the object, its fields and the map entry (rounded up).
const COUNTER_OVERHEAD_BYTES = 300;
const DROP_LOG_MS = 10_000;

interface Counter extends Omit<UsageEntry, "at"> {
  minute: number;
  calls: number;
  bytes: number;
}

/** Calls of one key, minute, status, route and client IP share one counter. */
function counterKey(c: Pick<UsageEntry, "tokenId" | "status" | "method" | "route" | "ip">, minute: number): string {
  return `${c.tokenId} ${minute} ${c.status} ${c.method} ${c.route} ${c.ip}`;
}

/** An upper estimate of a counter's heap size: its key (two bytes a character) and the rest. */
function counterBytes(key: string): number {
  return COUNTER_OVERHEAD_BYTES + 2 * key.length;
}

/**
 * Counts API calls made with a key per minute and per (key, route, status, client IP) in
 * memory, and writes the counters in batches: every second, at 500 counters, and on shutdown.
 * No request waits for its usage, and a busy key adds a row a minute, not a row per call.
 *
 * Memory is bounded in bytes (USAGE_BUFFER_MAX_BYTES), counting the counters waiting and those
 * being written: while the database is away a call still adds to its counter if it has one,
 * and a call that would need a new counter beyond the bound is dropped, counted in
 * `usage_calls_dropped_total` and logged (at most every 10 s). A failed write merges its
 * counters back into the waiting ones, which never grows the total.
 */
export class UsageMeter {
  #buffer = new Map<string, Counter>();
  /** Bytes of the counters waiting and of those being written. */
  #bytes = 0;
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #queued = false;
  #retryAt = 0;
  #closed = false;
  #droppedSinceLog = 0;
  #lastDropLog = 0;
  /** Calls not counted because the buffer was full. */
  dropped = 0;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
    private readonly maxBytes: number = DEFAULT_MAX_BYTES,
  ) {}

  /** Estimated bytes of unwritten counters. */
  get bytes(): number {
    return this.#bytes;
  }

  record(entry: UsageEntry): void {
    const minute = Math.floor(entry.at.getTime() / MINUTE_MS);
    const key = counterKey(entry, minute);
    const counter = this.#buffer.get(key);
    if (counter) counter.calls += 1;
    else {
      const bytes = counterBytes(key);
      if (this.#bytes + bytes <= this.maxBytes) {
        const { at: _at, ...fields } = entry;
        this.#buffer.set(key, { ...fields, minute, calls: 1, bytes });
        this.#bytes += bytes;
      } else this.#drop();
    }
    if (this.#buffer.size >= FLUSH_AT && Date.now() >= this.#retryAt) void this.flush();
    else this.#schedule(Math.max(FLUSH_MS, this.#retryAt - Date.now()));
  }

  #drop(): void {
    this.dropped += 1;
    this.#droppedSinceLog += 1;
    const now = Date.now();
    if (now - this.#lastDropLog >= DROP_LOG_MS) {
      this.log.error(
        { droppedCalls: this.#droppedSinceLog, bufferedBytes: this.#bytes },
        "usage buffer full (the database is not taking writes): calls not metered",
      );
      this.#lastDropLog = now;
      this.#droppedSinceLog = 0;
    }
  }

  #schedule(ms: number): void {
    if (this.#closed || this.#timer) return;
    this.#timer = setTimeout(() => void this.flush(), ms);
    this.#timer.unref();
  }

  /** The last flush, on shutdown: what cannot be written now is reported, not retried. */
  async close(): Promise<void> {
    this.#closed = true;
    await this.flush();
    if (this.#buffer.size > 0) {
      this.log.error({ counters: this.#buffer.size }, "usage could not be written before shutdown");
    }
  }

  /** Writes everything counted so far; resolves once it is stored (or has failed to be). */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    // One write queued at most; it takes the counters when it starts, so none is left behind.
    if (!this.#queued) {
      this.#queued = true;
      this.#flushing = this.#flushing.then(() => {
        this.#queued = false;
        const batch = [...this.#buffer.values()];
        this.#buffer = new Map();
        return this.#write(batch);
      });
    }
    return this.#flushing;
  }

  async #write(batch: Counter[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      await this.db.query(
        `insert into api_usage (tenant_id, token_id, method, route, status, ip, at, calls)
         select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::smallint[], $6::text[], $7::timestamptz[], $8::int[])`,
        [
          batch.map((c) => c.tenantId),
          batch.map((c) => c.tokenId),
          batch.map((c) => c.method),
          batch.map((c) => c.route),
          batch.map((c) => c.status),
          batch.map((c) => c.ip),
          batch.map((c) => new Date(c.minute * MINUTE_MS)),
          batch.map((c) => c.calls),
        ],
      );
      for (const counter of batch) this.#bytes -= counter.bytes;
      this.#retryAt = 0;
    } catch (error) {
      // Put the counts back for the next flush rather than lose them: into the counter of the
      // same key if one was made meanwhile (its bytes are freed), else as they were (already
      // counted in #bytes), so the bound holds.
      for (const counter of batch) {
        const key = counterKey(counter, counter.minute);
        const current = this.#buffer.get(key);
        if (current) {
          current.calls += counter.calls;
          this.#bytes -= counter.bytes;
        } else this.#buffer.set(key, counter);
      }
      this.log.warn({ err: error, counters: batch.length }, "usage flush failed; will retry");
      this.#retryAt = Date.now() + RETRY_MS;
      this.#schedule(RETRY_MS);
    }
  }

  /** Prometheus metrics of the meter's buffer (served at /metrics), read when scraped. */
  registerMetrics(registry: Registry): void {
    const meter = this;
    new Gauge({
      name: "usage_buffer_bytes",
      help: "Estimated bytes of unwritten usage counters (bounded by USAGE_BUFFER_MAX_BYTES)",
      registers: [registry],
      collect() {
        this.set(meter.bytes);
      },
    });
    new PromCounter({
      name: "usage_calls_dropped_total",
      help: "API calls not metered because the usage buffer was full",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(meter.dropped);
      },
    });
  }
}

/**
 * Meters one answered request if it was made with an API key (`request.principal`), under its
 * route template. For routes that answer on their own (a hijacked reply runs no onResponse hook).
 */
export function meterRequest(meter: UsageMeter, request: FastifyRequest, status: number, at: Date): void {
  const principal = request.principal;
  if (principal?.kind !== "apiKey") return;
  meter.record({
    tenantId: principal.tenantId,
    tokenId: principal.tokenId,
    method: request.method,
    route: request.routeOptions.url ?? "unmatched",
    status,
    ip: request.ip,
    at,
  });
}

/**
 * The key id under which a tenant's clicks that were redirected but not recorded (their client
 * IP was past CLICK_RATE_PER_IP_PER_MINUTE) are counted: no key has it, so the API-key usage
 * leaves these rows out and reports them as `clicksNotRecorded`.
 */
export const NOT_RECORDED_CLICKS = "";

/** Counts one click that was redirected but not recorded, for its tenant (per minute, route and IP). */
export function meterNotRecordedClick(
  meter: UsageMeter,
  click: { tenantId: string; route: string; ip: string; at: Date },
): void {
  meter.record({ ...click, tokenId: NOT_RECORDED_CLICKS, method: "GET", status: 302 });
}

/** Meters every answered request made with an API key in the scope it is registered in. */
export const usageMetering = fp<{ meter: UsageMeter; clock: Clock }>(
  async (app: FastifyInstance, { meter, clock }) => {
    // Callback style: nothing here waits, so an async hook's promise would be pure overhead.
    app.addHook("onResponse", (request, reply, done) => {
      meterRequest(meter, request, reply.statusCode, clock.now());
      done();
    });
  },
  { name: "usage-metering" },
);
