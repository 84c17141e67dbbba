import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { CONVERSION_TYPES, type ConversionType } from "../src/features/tracking/index.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia, seedCatalog } from "./helpers/catalog.js";
import { prng } from "./helpers/workload.js";

// What a caller records: a Click is made by the redirect and refused by the API (docs/conversions.md).
const RECORDED_TYPES = CONVERSION_TYPES.filter((type) => type !== "Click");

const COLUMN: Record<ConversionType, string> = {
  Click: "click",
  Signup: "signup",
  FirstTimeDeposit: "ftd",
  Qualifier: "qualifier",
  Deposit: "deposit",
  CpaCommission: "cpa",
  RevShareCommission: "revshare",
  FlatFeeCommission: "flatfee",
};
const COMMISSIONS = new Set<ConversionType>(["CpaCommission", "RevShareCommission", "FlatFeeCommission"]);
const BROWSERS = [
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) Chrome/126.0 Safari/537.36",
  "Mozilla/5.0 (Macintosh; Intel Mac OS X 14_5) Version/17.5 Safari/605.1.15",
  "Mozilla/5.0 (X11; Linux x86_64; rv:127.0) Gecko/20100101 Firefox/127.0",
  "Mozilla/5.0 (iPhone; CPU iPhone OS 17_5 like Mac OS X) Mobile/15E148",
];
const BOTS = [
  "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)",
  "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)",
];

/** Totals of one rollup row (or of raw events with the same dimensions). */
interface Totals {
  clicks: number;
  unique: number;
  counts: Record<string, number>;
  /** Cents, exact. */
  amounts: Record<string, number>;
}

const emptyTotals = (): Totals => ({
  clicks: 0,
  unique: 0,
  counts: Object.fromEntries(Object.values(COLUMN).map((c) => [c, 0])),
  amounts: Object.fromEntries(Object.values(COLUMN).map((c) => [c, 0])),
});

/** numeric text with up to 4 places -> cents; every amount in these tests has at most 2. */
function cents(text: string): number {
  const negative = text.startsWith("-");
  const [whole = "0", fraction = ""] = text.replace("-", "").split(".");
  const hundredths = Number(whole) * 100 + Number(fraction.padEnd(4, "0").slice(0, 2));
  expect(fraction.padEnd(4, "0").slice(2)).toBe("00");
  return negative ? -hundredths : hundredths;
}

const centsText = (value: number): string => {
  const abs = Math.abs(value);
  return `${value < 0 ? "-" : ""}${Math.floor(abs / 100)}.${String(abs % 100).padStart(2, "0")}`;
};

interface Dims {
  day: string;
  accountId: number;
  linkId: number;
  brandId: number;
  programId: number;
  sourceId: number;
  trackerId: number;
  country: string;
}

/** The rollup key: the dimensions, then the currency of the amount ('' for clicks and conversions without a value). */
const keyOf = (d: Dims, currency = "") =>
  [d.day, d.accountId, d.linkId, d.brandId, d.programId, d.sourceId, d.trackerId, d.country, currency].join("|");

function add(map: Map<string, Totals>, key: string, change: (totals: Totals) => void): void {
  let totals = map.get(key);
  if (!totals) {
    totals = emptyTotals();
    map.set(key, totals);
  }
  change(totals);
}

async function rollupTotals(t: TestApp, tenantId: string): Promise<Map<string, Totals>> {
  const types = Object.values(COLUMN);
  const rows = await t.testDb.db.query<Record<string, string | number>>(
    `select to_char(day, 'YYYY-MM-DD') as day, account_id::text as account_id, link_id::text as link_id,
            brand_id::text as brand_id, program_id::text as program_id, traffic_source_id::text as source_id,
            tracker_id::text as tracker_id, country, currency, clicks::text as clicks, unique_clicks::text as uniq,
            ${types.map((c) => `${c}_count::text as ${c}_count, ${c}_amount::text as ${c}_amount`).join(", ")}
       from daily_rollups where tenant_id = $1`,
    [tenantId],
  );
  const map = new Map<string, Totals>();
  for (const row of rows) {
    const key = [
      row.day,
      row.account_id,
      row.link_id,
      row.brand_id,
      row.program_id,
      row.source_id,
      row.tracker_id,
      row.country,
      row.currency,
    ].join("|");
    expect(map.has(key), key).toBe(false);
    add(map, key, (totals) => {
      totals.clicks = Number(row.clicks);
      totals.unique = Number(row.uniq);
      for (const c of types) {
        totals.counts[c] = Number(row[`${c}_count`]);
        totals.amounts[c] = cents(String(row[`${c}_amount`]));
      }
    });
  }
  return map;
}

/** The same totals counted from the raw clicks and conversions tables. */
async function rawTotals(t: TestApp, tenantId: string): Promise<Map<string, Totals>> {
  const dims = `account_id::text as account_id, link_id::text as link_id, brand_id::text as brand_id,
    program_id::text as program_id, traffic_source_id::text as source_id`;
  const clicks = await t.testDb.db.query<Record<string, string>>(
    `select to_char((at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, ${dims},
            coalesce(tracker_id, 0)::text as tracker_id, coalesce(country, '') as country, '' as currency,
            (count(*) filter (where bot_reason is null))::text as clicks,
            (count(*) filter (where is_unique))::text as uniq
       from clicks where tenant_id = $1 group by 1, 2, 3, 4, 5, 6, 7, 8`,
    [tenantId],
  );
  const conversions = await t.testDb.db.query<Record<string, string>>(
    `select to_char((occurred_at at time zone 'UTC')::date, 'YYYY-MM-DD') as day,
            coalesce(account_id, 0)::text as account_id, coalesce(link_id, 0)::text as link_id,
            coalesce(brand_id, 0)::text as brand_id, coalesce(program_id, 0)::text as program_id,
            coalesce(traffic_source_id, 0)::text as source_id, coalesce(tracker_id, 0)::text as tracker_id,
            coalesce(country, '') as country, coalesce(case when value is not null then currency end, '') as currency,
            type, count(*)::text as n, coalesce(sum(value), 0)::numeric(24, 4)::text as amount
       from conversions where tenant_id = $1 group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10`,
    [tenantId],
  );
  const keyOfRow = (row: Record<string, string>) =>
    [
      row.day,
      row.account_id,
      row.link_id,
      row.brand_id,
      row.program_id,
      row.source_id,
      row.tracker_id,
      row.country,
      row.currency,
    ].join("|");
  const map = new Map<string, Totals>();
  for (const row of clicks) {
    add(map, keyOfRow(row), (totals) => {
      totals.clicks += Number(row.clicks);
      totals.unique += Number(row.uniq);
    });
  }
  for (const row of conversions) {
    const column = COLUMN[row.type as ConversionType];
    add(map, keyOfRow(row), (totals) => {
      totals.counts[column] = (totals.counts[column] ?? 0) + Number(row.n);
      totals.amounts[column] = (totals.amounts[column] ?? 0) + cents(String(row.amount));
    });
  }
  return map;
}

const sorted = (map: Map<string, Totals>) =>
  Object.fromEntries([...map.entries()].sort(([a], [b]) => (a < b ? -1 : 1)));

describe("unique clicks", () => {
  let t: TestApp;
  let who: Tenancy;
  let cat: CatalogFixture;
  let secondSource: number;

  beforeAll(async () => {
    t = await startTestApp();
    t.clock.set("2026-04-10T08:00:00.000Z");
    who = await seedTenancy(t);
    cat = await seedCatalog(t, who);
    secondSource = await createVia(t, who, "traffic-sources", { name: "Second source" });
  });
  afterAll(async () => t.close());

  const visit = async (ip: string, userAgent: string, sourceId = cat.trafficSourceId) => {
    const res = await t.call({
      method: "GET",
      url: `/go/${cat.linkId}/${sourceId}`,
      headers: { "user-agent": userAgent },
      remoteAddress: ip,
    });
    expect(res.statusCode).toBe(302);
    return new URL(String(res.headers.location)).searchParams.get("cid") as string;
  };

  async function totalsBy(day: string, sourceId: number): Promise<{ clicks: number; unique: number }> {
    const [row] = await t.testDb.db.query<{ clicks: string | null; uniq: string | null }>(
      `select sum(clicks)::text as clicks, sum(unique_clicks)::text as uniq from daily_rollups
        where tenant_id = $1 and day = $2::date and link_id = $3 and traffic_source_id = $4`,
      [who.tenantId, day, cat.linkId, sourceId],
    );
    return { clicks: Number(row?.clicks ?? 0), unique: Number(row?.uniq ?? 0) };
  }

  async function uniqueFlags(ids: string[]): Promise<boolean[]> {
    const rows = await t.testDb.db.query<{ id: string; is_unique: boolean }>(
      "select id, is_unique from clicks where id = any($1::text[])",
      [ids],
    );
    const flags = new Map(rows.map((r) => [r.id, r.is_unique]));
    return ids.map((id) => flags.get(id) as boolean);
  }

  it("counts a visitor (ip + user agent) once per link, source and UTC day", async () => {
    const [chrome, safari] = BROWSERS as [string, string];
    // Two clicks of one visitor in one batch.
    const a1 = await visit("198.51.100.1", chrome);
    const a2 = await visit("198.51.100.1", chrome);
    await t.ctx.tracking.clicks.flush();
    expect(await totalsBy("2026-04-10", cat.trafficSourceId)).toEqual({ clicks: 2, unique: 1 });
    expect(await uniqueFlags([a1, a2])).toEqual([true, false]);

    // The same visitor in a later batch is still not new; another ip or user agent is.
    t.clock.advance(3 * 3_600_000);
    const a3 = await visit("198.51.100.1", chrome);
    const b = await visit("198.51.100.2", chrome);
    const c = await visit("198.51.100.1", safari);
    // The same visitor on another traffic source is new there.
    const d = await visit("198.51.100.1", chrome, secondSource);
    await t.ctx.tracking.clicks.flush();
    expect(await totalsBy("2026-04-10", cat.trafficSourceId)).toEqual({ clicks: 5, unique: 3 });
    expect(await totalsBy("2026-04-10", secondSource)).toEqual({ clicks: 1, unique: 1 });
    expect(await uniqueFlags([a3, b, c, d])).toEqual([false, true, true, true]);

    // The next UTC day the visitor counts again.
    t.clock.set("2026-04-11T00:00:01.000Z");
    const e1 = await visit("198.51.100.1", chrome);
    const e2 = await visit("198.51.100.1", chrome);
    await t.ctx.tracking.clicks.flush();
    expect(await totalsBy("2026-04-11", cat.trafficSourceId)).toEqual({ clicks: 2, unique: 1 });
    expect(await uniqueFlags([e1, e2])).toEqual([true, false]);
    // The day before is untouched.
    expect(await totalsBy("2026-04-10", cat.trafficSourceId)).toEqual({ clicks: 5, unique: 3 });
  });
});

describe("daily rollups after a random workload", () => {
  let t: TestApp;
  let who: Tenancy;
  let other: Tenancy;
  let otherCat: CatalogFixture;

  beforeAll(async () => {
    t = await startTestApp();
    t.clock.set("2026-03-01T21:00:00.000Z");
    who = await seedTenancy(t);
    other = await seedTenancy(t);
    otherCat = await seedCatalog(t, other);
  });
  afterAll(async () => t.close());

  it("equal the raw clicks and conversions per dimension, and the workload itself", async () => {
    const rnd = prng(20260301);
    // Two links on different accounts, programs and brands; two traffic sources.
    const brand1 = await createVia(t, who, "brands", { name: "Brand one" });
    const brand2 = await createVia(t, who, "brands", { name: "Brand two" });
    const program1 = await createVia(t, who, "programs", { name: "Program one", brandIds: [brand1, brand2] });
    const program2 = await createVia(t, who, "programs", { name: "Program two", brandIds: [brand2] });
    const account1 = await createVia(t, who, "accounts", { name: "Account one", programId: program1 });
    const account2 = await createVia(t, who, "accounts", { name: "Account two", programId: program2 });
    const links = [
      {
        id: await createVia(t, who, "links", {
          name: "L1",
          accountId: account1,
          brandId: brand1,
          url: "https://one.example/?c={clickId}",
        }),
        accountId: account1,
        brandId: brand1,
        programId: program1,
      },
      {
        id: await createVia(t, who, "links", {
          name: "L2",
          accountId: account2,
          brandId: brand2,
          url: "https://two.example/x/{clickId}",
        }),
        accountId: account2,
        brandId: brand2,
        programId: program2,
      },
    ];
    const sources = [
      await createVia(t, who, "traffic-sources", { name: "S1" }),
      await createVia(t, who, "traffic-sources", { name: "S2" }),
    ];
    const existing = await createVia(t, who, "trackers", { name: "Existing Tracker" });
    const theirTracker = await createVia(t, other, "trackers", { name: "Their Tracker" });
    // Tracker values and how each resolves: an id, a name (created or matched), or none.
    const trackerValues: { value: string | null; resolves: number | string | null }[] = [
      { value: null, resolves: null },
      { value: String(existing), resolves: existing },
      { value: "existing TRACKER", resolves: existing },
      { value: "Beta Campaign", resolves: "beta campaign" },
      { value: "BETA campaign", resolves: "beta campaign" },
      { value: "gamma-list", resolves: "gamma-list" },
      { value: "987654321", resolves: null },
      { value: String(theirTracker), resolves: null },
      { value: "ab", resolves: null },
    ];
    const countries: [string | null, string][] = [
      [null, ""],
      ["DE", "DE"],
      ["fr", "FR"],
      ["US", "US"],
      ["XX", ""],
    ];
    const ips = ["203.0.113.1", "203.0.113.2", "203.0.113.3", "2001:db8::7", "198.51.100.9"];

    interface ModelClick {
      id: string;
      at: Date;
      link: (typeof links)[number];
      sourceId: number;
      tracker: number | string | null;
      country: string;
      visitor: string;
    }
    const counted: ModelClick[] = [];
    let notCounted = 0;

    interface ModelConversion {
      type: ConversionType;
      cents: number;
      /** '' without a value. */
      currency: string;
      click: ModelClick | null;
      occurredAt: Date;
    }
    const recorded: ModelConversion[] = [];
    const externalIds: string[] = [];
    let sent = 0;
    let duplicates = 0;
    let pendingBatch: { item: Record<string, unknown>; model: ModelConversion; duplicate: boolean }[] = [];

    const seenExternal = new Set<string>();
    function makeConversion(): { fields: Record<string, string>; model: ModelConversion; duplicate: boolean } {
      const type = rnd.pick(RECORDED_TYPES);
      let value = rnd.chance(0.15) ? 0 : rnd.int(1, 99_999);
      if (COMMISSIONS.has(type) && rnd.chance(0.25)) value = -value;
      const now = t.clock.now();
      let click: ModelClick | null = null;
      let clickId: string | null = null;
      const attribution = rnd.next();
      if (attribution < 0.7 && counted.length > 0) {
        click = rnd.pick(counted);
        clickId = click.id;
      } else if (attribution < 0.85) {
        clickId = `unknown-${rnd.int(1, 1_000_000)}`;
      }
      const earliest = click ? click.at.getTime() : now.getTime() - 36 * 3_600_000;
      const occurredAt = rnd.chance(0.3) ? now : new Date(rnd.int(earliest, now.getTime()));
      const fields: Record<string, string> = { type, value: centsText(value) };
      if (value !== 0 || rnd.chance(0.5)) fields.currency = rnd.pick(["EUR", "usd", "GBP"]);
      if (clickId !== null) fields.clickId = clickId;
      if (occurredAt !== now) fields.occurredAt = occurredAt.toISOString();
      let duplicate = false;
      const externalChoice = rnd.next();
      if (externalChoice < 0.12 && externalIds.length > 0) {
        fields.externalId = rnd.pick(externalIds);
        duplicate = true;
      } else if (externalChoice < 0.8) {
        const id = `ext-${externalIds.length + 1}`;
        externalIds.push(id);
        fields.externalId = id;
      }
      // A value sent without a currency is in the tenant's default one (USD).
      const model = { type, cents: value, currency: (fields.currency ?? "USD").toUpperCase(), click, occurredAt };
      return { fields, model, duplicate };
    }

    function note(model: ModelConversion, duplicate: boolean): void {
      sent += 1;
      if (duplicate) duplicates += 1;
      else recorded.push(model);
    }

    async function sendBatch(): Promise<void> {
      if (pendingBatch.length === 0) return;
      const batch = pendingBatch;
      pendingBatch = [];
      const res = await t.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: who.apiKey },
        payload: { items: batch.map((b) => b.item) },
      });
      expect([200, 201], res.body).toContain(res.statusCode);
      const items = res.json().data.items as { duplicate: boolean; attributed: boolean }[];
      expect(items.map((i) => i.duplicate)).toEqual(batch.map((b) => b.duplicate));
      batch.forEach((b, i) => {
        if (!b.duplicate) expect(items[i]?.attributed).toBe(b.model.click !== null);
      });
      for (const b of batch) note(b.model, b.duplicate);
    }

    async function convert(): Promise<void> {
      const { fields, model, duplicate } = makeConversion();
      // Seen twice inside one batch is a duplicate too; only the first record counts.
      const externalId = fields.externalId;
      const isDuplicate = externalId !== undefined && seenExternal.has(externalId);
      expect(isDuplicate).toBe(duplicate && externalId !== undefined);
      if (externalId !== undefined) seenExternal.add(externalId);
      const channel = rnd.pick(["api", "batch", "postback-get", "postback-json", "postback-form"] as const);
      if (channel === "batch") {
        const item: Record<string, unknown> = { ...fields };
        if (rnd.chance(0.5)) item.value = Number(fields.value);
        pendingBatch.push({ item, model, duplicate: isDuplicate });
        if (pendingBatch.length >= 5) await sendBatch();
        return;
      }
      // A batch still waiting holds conversions made earlier: send it first, in order.
      await sendBatch();
      let res: Awaited<ReturnType<TestApp["call"]>>;
      let attributed: boolean;
      let wasDuplicate: boolean;
      if (channel === "api") {
        const payload: Record<string, unknown> = { ...fields };
        if (rnd.chance(0.5)) payload.value = Number(fields.value);
        res = await t.call({
          method: "POST",
          url: "/api/v1/conversions",
          headers: { authorization: who.apiKey },
          payload,
        });
        attributed = res.json().data.attributed;
        wasDuplicate = res.json().data.duplicate;
      } else {
        const url = `/postback/${who.postbackKey}`;
        if (channel === "postback-get") {
          res = await t.call({ method: "GET", url: `${url}?${new URLSearchParams(fields).toString()}` });
        } else if (channel === "postback-json") {
          res = await t.call({ method: "POST", url, payload: fields });
        } else {
          res = await t.call({
            method: "POST",
            url,
            headers: { "content-type": "application/x-www-form-urlencoded" },
            payload: new URLSearchParams(fields).toString(),
          });
        }
        const body = JSON.parse(res.body) as { status: string; attributed: boolean };
        attributed = body.attributed;
        wasDuplicate = body.status === "duplicate";
      }
      expect(res.statusCode, res.body).toBe(isDuplicate ? 200 : 201);
      expect(wasDuplicate).toBe(isDuplicate);
      if (!isDuplicate) expect(attributed).toBe(model.click !== null);
      note(model, isDuplicate);
    }

    const CLICKS = 450;
    for (let i = 0; i < CLICKS; i++) {
      t.clock.advance(rnd.int(0, 20 * 60_000));
      const link = rnd.pick(links);
      const sourceId = rnd.pick(sources);
      const tracker = rnd.pick(trackerValues);
      const [countryHeader, country] = rnd.pick(countries);
      const ip = rnd.pick(ips);
      const bot = rnd.chance(0.08);
      const head = !bot && rnd.chance(0.06);
      const userAgent = bot ? rnd.pick(BOTS) : rnd.pick(BROWSERS);
      const headers: Record<string, string> = { "user-agent": userAgent };
      if (countryHeader !== null) headers["cf-ipcountry"] = countryHeader;
      const query = new URLSearchParams();
      if (tracker.value !== null) query.set("tracker", tracker.value);
      if (rnd.chance(0.3)) query.set(rnd.pick(["gclid", "fbclid", "msclkid", "obclid"]), `ad-${i}`);
      const at = t.clock.now();
      const res = await t.call({
        method: head ? "HEAD" : "GET",
        url: `/go/${link.id}/${sourceId}${query.size > 0 ? `?${query.toString()}` : ""}`,
        headers,
        remoteAddress: ip,
      });
      expect(res.statusCode).toBe(302);
      const location = new URL(String(res.headers.location));
      const id = location.searchParams.get("c") ?? location.pathname.split("/").pop();
      expect(id).toMatch(/^clk_/);
      if (bot || head) notCounted += 1;
      else
        counted.push({
          id: id as string,
          at,
          link,
          sourceId,
          tracker: tracker.resolves,
          country,
          visitor: `${ip}\n${userAgent}`,
        });
      if (rnd.chance(0.1)) await t.ctx.tracking.clicks.flush();
      if (rnd.chance(0.25)) await convert();
    }
    await sendBatch();
    // One conversion carrying another tenant's click id: not attributed here.
    const foreign = await t.call({
      method: "GET",
      url: `/go/${otherCat.linkId}/${otherCat.trafficSourceId}`,
      headers: { "user-agent": BROWSERS[0] as string },
    });
    const foreignId = new URL(String(foreign.headers.location)).searchParams.get("cid") as string;
    await t.ctx.tracking.clicks.flush();
    const foreignConversion = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Signup", clickId: foreignId },
    });
    expect(foreignConversion.statusCode, foreignConversion.body).toBe(201);
    expect(foreignConversion.json().data.attributed).toBe(false);
    recorded.push({ type: "Signup", cents: 0, currency: "", click: null, occurredAt: t.clock.now() });
    await t.ctx.tracking.clicks.flush();

    // The workload is what the test means it to be.
    const days = new Set(counted.map((c) => c.at.toISOString().slice(0, 10)));
    expect(days.size).toBeGreaterThanOrEqual(3);
    expect(notCounted).toBeGreaterThan(20);
    expect(recorded.length).toBeGreaterThan(60);
    expect(duplicates).toBeGreaterThan(3);
    expect(recorded.filter((r) => r.click === null).length).toBeGreaterThan(5);
    expect(new Set(recorded.map((r) => r.type)).size).toBe(RECORDED_TYPES.length);
    expect(recorded.some((r) => r.cents < 0)).toBe(true);
    expect(sent).toBe(recorded.length - 1 + duplicates);

    // 1. The rollups equal the raw tables, row for row.
    const rollups = await rollupTotals(t, who.tenantId);
    const raw = await rawTotals(t, who.tenantId);
    expect(sorted(rollups)).toEqual(sorted(raw));

    // 2. Both equal the workload as the test made it.
    const trackerRows = await t.testDb.db.query<{ id: string; name: string }>(
      "select id, name from trackers where tenant_id = $1",
      [who.tenantId],
    );
    const trackerByName = new Map(trackerRows.map((r) => [r.name, Number(r.id)]));
    expect([...trackerByName.keys()].sort()).toEqual(["beta campaign", "Existing Tracker", "gamma-list"].sort());
    const trackerIdOf = (tracker: number | string | null): number =>
      tracker === null ? 0 : typeof tracker === "number" ? tracker : (trackerByName.get(tracker) as number);
    const clickDims = (click: ModelClick, at: Date): Dims => ({
      day: at.toISOString().slice(0, 10),
      accountId: click.link.accountId,
      linkId: click.link.id,
      brandId: click.link.brandId,
      programId: click.link.programId,
      sourceId: click.sourceId,
      trackerId: trackerIdOf(click.tracker),
      country: click.country,
    });
    const expected = new Map<string, Totals>();
    const visitors = new Set<string>();
    for (const click of counted) {
      const dims = clickDims(click, click.at);
      const visitor = `${dims.day}|${dims.linkId}|${dims.sourceId}|${click.visitor}`;
      const first = !visitors.has(visitor);
      visitors.add(visitor);
      add(expected, keyOf(dims), (totals) => {
        totals.clicks += 1;
        if (first) totals.unique += 1;
      });
    }
    for (const conversion of recorded) {
      const column = COLUMN[conversion.type];
      const dims: Dims = conversion.click
        ? clickDims(conversion.click, conversion.occurredAt)
        : {
            day: conversion.occurredAt.toISOString().slice(0, 10),
            accountId: 0,
            linkId: 0,
            brandId: 0,
            programId: 0,
            sourceId: 0,
            trackerId: 0,
            country: "",
          };
      add(expected, keyOf(dims, conversion.currency), (totals) => {
        totals.counts[column] = (totals.counts[column] ?? 0) + 1;
        totals.amounts[column] = (totals.amounts[column] ?? 0) + conversion.cents;
      });
    }
    // Rows that hold bots' clicks alone (bot_clicks, not compared here) are not the workload's.
    const people = (totals: Totals) =>
      totals.clicks !== 0 ||
      totals.unique !== 0 ||
      Object.values(totals.counts).some((n) => n !== 0) ||
      Object.values(totals.amounts).some((n) => n !== 0);
    expect(sorted(new Map([...rollups].filter(([, totals]) => people(totals))))).toEqual(sorted(expected));

    // 3. Unique clicks per link, source and day are the distinct visitors in the raw clicks.
    const distinct = await t.testDb.db.query<{ day: string; link: string; source: string; n: string }>(
      `select to_char((at at time zone 'UTC')::date, 'YYYY-MM-DD') as day, link_id::text as link,
              traffic_source_id::text as source, count(distinct coalesce(ip, '') || chr(10) || coalesce(user_agent, ''))::text as n
         from clicks where tenant_id = $1 and bot_reason is null group by 1, 2, 3`,
      [who.tenantId],
    );
    const uniqueBy = new Map<string, number>();
    for (const [key, totals] of rollups) {
      const [day, , link, , , source] = key.split("|");
      // Rows of unattributed conversions have no link and no clicks.
      if (link === "0") continue;
      const k = `${day}|${link}|${source}`;
      uniqueBy.set(k, (uniqueBy.get(k) ?? 0) + totals.unique);
    }
    // A day, link and source with bots' clicks only has a rollup row but no visitor.
    expect(Object.fromEntries([...uniqueBy].filter(([, n]) => n > 0).sort())).toEqual(
      Object.fromEntries(distinct.map((r) => [`${r.day}|${r.link}|${r.source}`, Number(r.n)]).sort()),
    );

    // 4. Totals: every counted click and every non-duplicate conversion, nothing more.
    const [counts] = await t.testDb.db.query<{ clicks: string; conversions: string }>(
      `select (select count(*) from clicks where tenant_id = $1 and bot_reason is null)::text as clicks,
              (select count(*) from conversions where tenant_id = $1)::text as conversions`,
      [who.tenantId],
    );
    expect(Number(counts?.clicks)).toBe(counted.length);
    expect(Number(counts?.conversions)).toBe(recorded.length);
  });
});
