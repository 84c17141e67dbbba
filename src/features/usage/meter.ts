import type { FastifyBaseLogger, FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";

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
// Beyond this many unwritten counters (the database is down), new ones are dropped, not memory.
const MAX_BUFFERED = 100_000;
const MINUTE_MS = 60_000;

interface Counter extends Omit<UsageEntry, "at"> {
  minute: number;
  calls: number;
}

/** Calls of one key, minute, status, route and client IP share one counter. */
function counterKey(c: Pick<UsageEntry, "tokenId" | "status" | "method" | "route" | "ip">, minute: number): string {
  return `${c.tokenId} ${minute} ${c.status} ${c.method} ${c.route} ${c.ip}`;
}

/**
 * Counts API calls made with a key per minute and per (key, route, status, client IP) in
 * memory, and writes the counters in batches: every second, at 500 counters, and on shutdown.
 * No request waits for its usage, and a busy key adds a row a minute, not a row per call.
 */
export class UsageMeter {
  #buffer = new Map<string, Counter>();
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {}

  record(entry: UsageEntry): void {
    const minute = Math.floor(entry.at.getTime() / MINUTE_MS);
    const key = counterKey(entry, minute);
    const counter = this.#buffer.get(key);
    if (counter) counter.calls += 1;
    else if (this.#buffer.size < MAX_BUFFERED) {
      const { at: _at, ...fields } = entry;
      this.#buffer.set(key, { ...fields, minute, calls: 1 });
    }
    if (this.#buffer.size >= FLUSH_AT) void this.flush();
    else this.#schedule(FLUSH_MS);
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

  /** Writes everything counted so far; resolves once it is stored. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = [...this.#buffer.values()];
    this.#buffer = new Map();
    this.#flushing = this.#flushing.then(() => this.#write(batch));
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
    } catch (error) {
      // Put the counts back for the next flush rather than lose them.
      for (const counter of batch) {
        const key = counterKey(counter, counter.minute);
        const current = this.#buffer.get(key);
        if (current) current.calls += counter.calls;
        else this.#buffer.set(key, counter);
      }
      this.log.warn({ err: error, counters: batch.length }, "usage flush failed; will retry");
      this.#schedule(FLUSH_MS * 5);
    }
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
