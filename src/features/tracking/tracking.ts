import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { idTime } from "../../platform/ids.js";
import { TrackingCache } from "./cache.js";
import { ClickBuffer, type ClickBufferOptions, type ClickHook } from "./click-buffer.js";
import type { ValidConversion } from "./conversion-input.js";
import { type ConversionHook, type RecordedConversion, recordConversions } from "./conversion-service.js";

// A click made on another node a moment ago may still sit in that node's buffer: wait up to this
// long for it before recording a conversion (or page view) as not belonging to a known click.
const RECENT_CLICK_MS = 2_000;
const WAIT_STEP_MS = 100;

/** The tracking side of a node: its catalog cache, its click buffer and the conversion hooks. */
export class Tracking {
  readonly cache: TrackingCache;
  readonly clicks: ClickBuffer;
  /** Run for every new conversion in its transaction; the outgoing-webhooks feature adds its outbox here. */
  readonly conversionHooks: ConversionHook[] = [];
  /** Run for every written batch of clicks in its transaction; click postbacks start here. */
  readonly clickHooks: ClickHook[] = [];

  constructor(
    private readonly db: Db,
    private readonly clock: Clock,
    log: FastifyBaseLogger,
    options: ClickBufferOptions = {},
  ) {
    this.cache = new TrackingCache(db);
    this.clicks = new ClickBuffer(db, clock, log, options, this.clickHooks);
  }

  async start(): Promise<void> {
    await this.cache.start();
    this.clicks.start();
  }

  async stop(): Promise<void> {
    await this.clicks.stop();
    await this.cache.stop();
  }

  /**
   * Makes sure the clicks are in the database before something is attached to them: flushes
   * this node's buffer if it holds one, and briefly waits for a click just made on another node.
   */
  async ensureClicksWritten(clickIds: string[]): Promise<void> {
    if (clickIds.length === 0) return;
    if (clickIds.some((id) => this.clicks.holds(id))) await this.clicks.flush();
    const deadline = Date.now() + RECENT_CLICK_MS;
    let waiting = clickIds.filter((id) => this.isRecent(id));
    while (waiting.length > 0 && Date.now() < deadline) {
      // Any tenant's: a click of another tenant is there already, and waiting would not change that.
      const found = await this.db.query<{ id: string }>("select id from clicks where id = any($1::text[])", [waiting]);
      const known = new Set(found.map((r) => r.id));
      waiting = waiting.filter((id) => !known.has(id));
      if (waiting.length > 0) await new Promise((resolve) => setTimeout(resolve, WAIT_STEP_MS));
    }
  }

  private isRecent(clickId: string): boolean {
    if (!clickId.startsWith("clk_")) return false;
    const made = idTime(clickId);
    return made !== null && Math.abs(Date.now() - made.getTime()) < RECENT_CLICK_MS;
  }

  /** Records conversions synchronously, in one transaction. */
  async recordConversions(tenantId: string, items: ValidConversion[]): Promise<RecordedConversion[]> {
    const clickIds = items.flatMap((item) => (item.clickId === null ? [] : [item.clickId]));
    await this.ensureClicksWritten(clickIds);
    const now = this.clock.now();
    return this.db.transaction((tx) => recordConversions(tx, tenantId, items, now, this.conversionHooks));
  }
}
