import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR_MS } from "../src/platform/durations.js";
import { addressHash, IpCounters } from "../src/platform/ip-counters.js";
import { HEALTH_KEY, seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";
import { createHook, setClickWebhooks, startWebhookTestApp } from "./helpers/webhooks.js";

// One visitor's clicks (docs/limits.md "Clicks from one address"): past CLICK_RATE_PER_IP_PER_MINUTE
// an address is still redirected, but its clicks are not recorded (no row, no tracker, no click
// webhook) and are counted in clicks_not_recorded_total and the tenant's usage; new trackers made
// by clicks are bounded per tenant per hour (TRACKERS_PER_TENANT_PER_HOUR). Limits are set small.

const RATE = 3;
const TRACKERS = 2;
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36";

let t: TestApp;
/** Tenant A with click webhooks on and a Click webhook; tenant B for the tracker budget. */
let who: Tenancy;
let cat: CatalogFixture;
let b: Tenancy;
let bCat: CatalogFixture;

beforeAll(async () => {
  t = await startWebhookTestApp({
    // The client address comes from X-Forwarded-For, as behind a balancer (TRUST_PROXY).
    env: {
      CLICK_RATE_PER_IP_PER_MINUTE: String(RATE),
      TRACKERS_PER_TENANT_PER_HOUR: String(TRACKERS),
      TRUST_PROXY: "127.0.0.1",
    },
    // Buffered clicks are written when a test flushes them.
    app: { clicks: { intervalMs: 3_600_000 } },
  });
  [who, b] = await Promise.all([seedTenancy(t), seedTenancy(t)]);
  [cat, bCat] = await Promise.all([seedCatalog(t, who), seedCatalog(t, b)]);
  await setClickWebhooks(t, who, true);
  // Nothing listens there: the tests count the events clicks make, not their deliveries.
  await createHook(t, who, {
    name: "Clicks",
    url: "http://127.0.0.1:9/click",
    conversionTypes: ["Click"],
  });
});
afterAll(() => t.close());

/** A click from `ip` (through the trusted proxy); returns the click id the redirect carries. */
async function click(cat: CatalogFixture, ip: string, query = ""): Promise<string> {
  const res = await t.call({
    method: "GET",
    url: `/go/${cat.linkId}/${cat.trafficSourceId}${query}`,
    headers: { "user-agent": BROWSER, "x-forwarded-for": ip },
  });
  // A visitor is always sent on.
  expect(res.statusCode, res.body).toBe(302);
  const id = new URL(String(res.headers.location)).searchParams.get("cid");
  expect(id).toMatch(/^clk_/);
  return id as string;
}

async function storedClicks(ids: string[]): Promise<{ id: string; tracker_id: string | null }[]> {
  return t.testDb.db.query<{ id: string; tracker_id: string | null }>(
    "select id, tracker_id from clicks where id = any($1::text[]) order by id",
    [ids],
  );
}

async function trackerNames(tenantId: string): Promise<string[]> {
  const rows = await t.testDb.db.query<{ name: string }>(
    "select name from trackers where tenant_id = $1 order by name",
    [tenantId],
  );
  return rows.map((r) => r.name);
}

async function metric(name: string): Promise<number> {
  const res = await t.call({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${HEALTH_KEY}` } });
  expect(res.statusCode).toBe(200);
  const line = res.body.split("\n").find((l) => l.startsWith(`${name} `));
  return Number(line?.split(" ")[1]);
}

describe("clicks past an address's rate", () => {
  it("are redirected but not recorded: no row, no tracker, no click webhook; counted in the metric and usage", async () => {
    const notRecordedBefore = await metric("clicks_not_recorded_total");
    const ip = "198.51.100.7";
    const kept: string[] = [];
    for (let i = 0; i < RATE; i++) kept.push(await click(cat, ip, `?pa=kept-${i}`));
    // Past the rate: new tracker names, which would each make a tracker if recorded.
    const over = [await click(cat, ip, "?tracker=flood-name-1"), await click(cat, ip, "?tracker=flood-name-2")];
    // A bot and a HEAD are never recorded and do not spend the address's rate.
    await t.call({
      method: "HEAD",
      url: `/go/${cat.linkId}/${cat.trafficSourceId}`,
      headers: { "user-agent": BROWSER, "x-forwarded-for": "198.51.100.8" },
    });
    await t.ctx.tracking.clicks.flush();

    expect((await storedClicks([...kept, ...over])).map((r) => r.id)).toEqual([...kept].sort());
    expect(await trackerNames(who.tenantId)).toEqual([]);
    const events = await t.testDb.db.query<{ click_id: string }>(
      "select click_id from webhook_events where tenant_id = $1 order by click_id",
      [who.tenantId],
    );
    expect(events.map((e) => e.click_id)).toEqual([...kept].sort());

    expect(t.ctx.tracking.clicksNotRecorded).toBe(2);
    expect((await metric("clicks_not_recorded_total")) - notRecordedBefore).toBe(2);
    const usage = await t.call({
      method: "GET",
      url: "/api/v1/traffic-controls/api-usage/stats",
      headers: { authorization: who.bearer },
    });
    expect(usage.statusCode, usage.body).toBe(200);
    expect(usage.json().data.clicksNotRecorded).toBe(2);
    // They are not API calls: the key's figures leave them out.
    expect(usage.json().data.byStatusClass["3xx"]).toBe(0);
  });

  it("leaves another address unaffected, and keeps counting the first one", async () => {
    const fresh = await click(cat, "203.0.113.50");
    const stillOver = await click(cat, "198.51.100.7");
    await t.ctx.tracking.clicks.flush();
    expect((await storedClicks([fresh, stillOver])).map((r) => r.id)).toEqual([fresh]);
  });

  it("counts an IPv6 client per /64, however its address is written", async () => {
    const ids: string[] = [];
    for (const ip of ["2001:db8:7:1::1", "2001:db8:7:1:0:0:0:2", "2001:DB8:7:1::abcd", "2001:db8:7:1:ffff::9"]) {
      ids.push(await click(cat, ip));
    }
    ids.push(await click(cat, "2001:db8:7:2::1"));
    await t.ctx.tracking.clicks.flush();
    const stored = new Set((await storedClicks(ids)).map((r) => r.id));
    expect(ids.map((id) => stored.has(id))).toEqual([true, true, true, false, true]);
  });
});

describe("trackers created by clicks", () => {
  it("are bounded per tenant per hour: past it the click is recorded without a tracker", async () => {
    // One address per click: the per-address rate is not what this measures.
    let n = 0;
    const ip = () => `192.0.2.${++n}`;

    const first = [] as string[];
    for (const name of ["name-aaaa", "name-bbbb", "name-cccc", "name-dddd"]) {
      first.push(await click(bCat, ip(), `?tracker=${name}`));
    }
    await t.ctx.tracking.clicks.flush();
    expect(await trackerNames(b.tenantId)).toEqual(["name-aaaa", "name-bbbb"]);
    const rows = await storedClicks(first);
    expect(rows).toHaveLength(4);
    const byId = new Map(rows.map((r) => [r.id, r.tracker_id]));
    expect(first.map((id) => byId.get(id) !== null)).toEqual([true, true, false, false]);

    // Within the hour: a known name still resolves, a new one gets no tracker; tenant A has a budget of its own.
    const known = await click(bCat, ip(), "?tracker=name-aaaa");
    const refused = await click(bCat, ip(), "?tracker=name-eeee");
    const elsewhere = await click(cat, ip(), "?tracker=name-eeee");
    await t.ctx.tracking.clicks.flush();
    const later = new Map((await storedClicks([known, refused, elsewhere])).map((r) => [r.id, r.tracker_id]));
    expect(later.get(known)).toBe(byId.get(first[0] as string));
    expect(later.get(refused)).toBeNull();
    expect(later.get(elsewhere)).not.toBeNull();
    expect(await trackerNames(who.tenantId)).toEqual(["name-eeee"]);

    // An hour on, the tenant may create trackers again.
    t.clock.advance(HOUR_MS + 1000);
    const next = await click(bCat, ip(), "?tracker=name-ffff");
    await t.ctx.tracking.clicks.flush();
    expect((await storedClicks([next]))[0]?.tracker_id).not.toBeNull();
    expect(await trackerNames(b.tenantId)).toEqual(["name-aaaa", "name-bbbb", "name-ffff"]);
  });
});

describe("the per-address table", () => {
  it("is fixed in size, and forgets the least busy address first when full", () => {
    const table = new IpCounters(4);
    expect(table.bytes).toBe(4 * 16);
    for (let i = 0; i < 10; i++) table.hit("198.51.100.1", 0, 60_000);
    // Every other address competes for the three slots left (and for the busy one's).
    for (let i = 0; i < 50; i++) table.hit(`10.0.0.${i}`, 0, 60_000);
    expect(table.evictions).toBeGreaterThan(0);
    expect(table.bytes).toBe(4 * 16);
    expect(table.hit("198.51.100.1", 1, 60_000)).toBe(11);
    // A window ends: the address starts again.
    expect(table.hit("198.51.100.1", 60_001, 60_000)).toBe(1);
  });

  it("hashes an IPv6 address by its /64 and anything else as written", () => {
    const seed = 12345;
    expect(addressHash("2001:db8::1", seed)).toBe(addressHash("2001:0db8:0000:0000:ffff::", seed));
    expect(addressHash("2001:db8::1", seed)).not.toBe(addressHash("2001:db8:0:1::1", seed));
    expect(addressHash("fe80::1%eth0", seed)).toBe(addressHash("fe80::2", seed));
    expect(addressHash("::ffff:192.0.2.1", seed)).not.toBe(addressHash("::ffff:192.0.2.2", seed));
    expect(addressHash("192.0.2.1", seed)).not.toBe(addressHash("192.0.2.2", seed));
    expect(addressHash("2001:db8:::1", seed)).not.toBe(addressHash("2001:db8::1", seed));
  });
});
