import type { FastifyBaseLogger } from "fastify";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Clock } from "../../platform/clock.js";
import { type Db, prepared } from "../../platform/db/index.js";
import { idTime } from "../../platform/ids.js";
import { IpCounters } from "../../platform/ip-counters.js";
import { agentCache, loadClickFacts } from "../click-facts/index.js";
import { type CatalogListener, TrackingCache } from "./cache.js";
import { ClickBuffer, type ClickBufferOptions, type ClickHook } from "./click-buffer.js";
import type { ValidConversion } from "./conversion-input.js";
import type { ConversionRecord } from "./conversion-record.js";
import { type ConversionHook, changeConversionStatus, type RecordedConversion } from "./conversion-service.js";
import type { ConversionStatus, StatusOrigin } from "./conversion-status.js";
import { ConversionWriter } from "./conversion-writer.js";
import type { DeliveryListing } from "./deliveries.js";
import type { StatusChangeHook } from "./status-changes.js";

const CLICKS_WRITTEN = prepared("tracking.clicks-written", "select id from clicks where id = any($1::text[])");

// A click made on another node a moment ago may still sit in that node's buffer: wait up to this
// long for it before recording a conversion (or page view) as not belonging to a known click.
const RECENT_CLICK_MS = 2_000;
const WAIT_STEP_MS = 100;
// Client addresses whose clicks of the current minute are counted (CLICK_RATE_PER_IP_PER_MINUTE):
// 16 bytes each, 1 MiB in all, allocated once. Beyond 65,536 addresses active in one minute the
// least active are forgotten first (they start a fresh count).
const CLICK_ADDRESS_SLOTS = 65_536;

/** The tracking side of a node: its catalog cache, its click buffer and the conversion hooks. */
export class Tracking {
  readonly cache: TrackingCache;
  readonly clicks: ClickBuffer;
  /** Run for every new conversion in its transaction; the outgoing-webhooks feature adds its outbox here. */
  readonly conversionHooks: ConversionHook[] = [];
  /** Run for every change of a conversion's status in its transaction: whoever asked is told. */
  readonly statusHooks: StatusChangeHook[] = [];
  /** Where a conversion may go: each destination feature lists its deliveries of one (app.ts). */
  readonly destinations: DeliveryListing[] = [];
  /** Run for every written batch of clicks in its transaction; click postbacks start here. */
  readonly clickHooks: ClickHook[] = [];
  private readonly conversions: ConversionWriter;
  private readonly now: () => Date;
  /** Clicks per client address in the current minute, for CLICK_RATE_PER_IP_PER_MINUTE. */
  readonly clickAddresses = new IpCounters(CLICK_ADDRESS_SLOTS);
  /** Clicks redirected but not recorded: their address was past CLICK_RATE_PER_IP_PER_MINUTE. */
  clicksNotRecorded = 0;
  /** Postback keys looked up in the database (unknown ones included). */
  postbackKeyLookups = 0;

  constructor(
    private readonly db: Db,
    clock: Clock,
    log: FastifyBaseLogger,
    listenForCatalog: CatalogListener,
    options: ClickBufferOptions = {},
  ) {
    this.cache = new TrackingCache(db, listenForCatalog);
    this.clicks = new ClickBuffer(db, clock, log, options, this.clickHooks);
    this.conversions = new ConversionWriter(
      db,
      { conversions: this.conversionHooks, statusChanges: this.statusHooks },
      () => clock.now(),
    );
    this.now = () => clock.now();
  }

  /** Prometheus metrics of the per-address click limit (served at /metrics), read when scraped. */
  registerMetrics(registry: Registry): void {
    const tracking = this;
    new Counter({
      name: "clicks_not_recorded_total",
      help: "Clicks redirected but not recorded: their client IP was past CLICK_RATE_PER_IP_PER_MINUTE",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(tracking.clicksNotRecorded);
      },
    });
    new Gauge({
      name: "click_address_table_bytes",
      help: "Bytes of the per-address click counters (fixed)",
      registers: [registry],
      collect() {
        this.set(tracking.clickAddresses.bytes);
      },
    });
    new Gauge({
      name: "click_agent_cache_bytes",
      help: "Estimated bytes of the parsed user agents kept (device, OS, browser, bot; bounded at 2 MiB)",
      registers: [registry],
      collect() {
        this.set(agentCache().bytes);
      },
    });
    new Counter({
      name: "click_address_evictions_total",
      help: "Addresses whose click count was dropped to make room (more addresses in a minute than the table holds)",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(tracking.clickAddresses.evictions);
      },
    });
  }

  async start(): Promise<void> {
    // The address databases (country, data centers) load once per process, before any click.
    loadClickFacts();
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
      const found = await this.db.query<{ id: string }>(CLICKS_WRITTEN, [waiting]);
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

  /**
   * Records conversions synchronously: answered once committed, in a transaction the request may
   * share with the tenant's other requests of the moment (conversion-writer.ts).
   */
  async recordConversions(
    tenantId: string,
    items: ValidConversion[],
    origin: StatusOrigin,
  ): Promise<RecordedConversion[]> {
    const clickIds = items.flatMap((item) => (item.clickId === null ? [] : [item.clickId]));
    await this.ensureClicksWritten(clickIds);
    return this.conversions.record(tenantId, items, origin);
  }

  /** Sets one conversion's status (PATCH /conversions/{id}); null when the tenant has no such conversion. */
  changeStatus(
    tenantId: string,
    id: string,
    change: { status: ConversionStatus; reason: string | null; origin: StatusOrigin },
  ): Promise<{ conversion: ConversionRecord; changed: boolean } | null> {
    const now = this.now();
    return this.db.transaction((tx) => changeConversionStatus(tx, tenantId, id, change, now, this.statusHooks));
  }
}
