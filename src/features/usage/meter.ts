import type { FastifyBaseLogger, FastifyInstance } from "fastify";
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
// Beyond this many unwritten rows (the database is down), the oldest are dropped, not memory.
const MAX_BUFFERED = 100_000;

/**
 * Buffers one row per API call made with a key and writes them in batches: every second, at
 * 500 rows, and on shutdown. No request waits for its own usage row.
 */
export class UsageMeter {
  #buffer: UsageEntry[] = [];
  #timer: NodeJS.Timeout | undefined;
  #flushing: Promise<void> = Promise.resolve();
  #closed = false;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {}

  record(entry: UsageEntry): void {
    this.#buffer.push(entry);
    if (this.#buffer.length > MAX_BUFFERED) this.#buffer.splice(0, this.#buffer.length - MAX_BUFFERED);
    if (this.#buffer.length >= FLUSH_AT) void this.flush();
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
    if (this.#buffer.length > 0) {
      this.log.error({ rows: this.#buffer.length }, "usage rows could not be written before shutdown");
    }
  }

  /** Writes everything buffered so far; resolves once it is stored. */
  flush(): Promise<void> {
    clearTimeout(this.#timer);
    this.#timer = undefined;
    const batch = this.#buffer;
    this.#buffer = [];
    this.#flushing = this.#flushing.then(() => this.#write(batch));
    return this.#flushing;
  }

  async #write(batch: UsageEntry[]): Promise<void> {
    if (batch.length === 0) return;
    try {
      await this.db.query(
        `insert into api_usage (tenant_id, token_id, method, route, status, ip, at)
         select * from unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::smallint[], $6::text[], $7::timestamptz[])`,
        [
          batch.map((e) => e.tenantId),
          batch.map((e) => e.tokenId),
          batch.map((e) => e.method),
          batch.map((e) => e.route),
          batch.map((e) => e.status),
          batch.map((e) => e.ip),
          batch.map((e) => e.at),
        ],
      );
    } catch (error) {
      // Put the rows back for the next flush rather than lose them.
      this.#buffer = [...batch, ...this.#buffer].slice(-MAX_BUFFERED);
      this.log.warn({ err: error, rows: batch.length }, "usage flush failed; will retry");
      this.#schedule(FLUSH_MS * 5);
    }
  }
}

/** Meters every answered request made with an API key in the scope it is registered in. */
export const usageMetering = fp<{ meter: UsageMeter; clock: Clock }>(
  async (app: FastifyInstance, { meter, clock }) => {
    app.addHook("onResponse", async (request, reply) => {
      const principal = request.principal;
      if (principal?.kind !== "apiKey") return;
      meter.record({
        tenantId: principal.tenantId,
        tokenId: principal.tokenId,
        method: request.method,
        route: request.routeOptions.url ?? "unmatched",
        status: reply.statusCode,
        ip: request.ip,
        at: clock.now(),
      });
    });
  },
  { name: "usage-metering" },
);
