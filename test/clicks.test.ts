import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia, seedCatalog } from "./helpers/catalog.js";
import { openTestDb } from "./helpers/db.js";

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36";

interface ClickRow {
  id: string;
  tenant_id: string;
  at: Date;
  link_id: number;
  account_id: number;
  brand_id: number;
  program_id: number;
  traffic_source_id: number;
  tracker_id: number | null;
  is_unique: boolean;
  gclid: string | null;
  fbclid: string | null;
  msclkid: string | null;
  obclid: string | null;
  parameter_a: string | null;
  parameter_b: string | null;
  external_click_id: string | null;
  utm: unknown;
  user_agent: string | null;
  ip: string | null;
  country: string | null;
  referrer: string | null;
  bot_reason: string | null;
}

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let other: Tenancy;
let otherCat: CatalogFixture;

beforeAll(async () => {
  t = await startTestApp();
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  other = await seedTenancy(t);
  otherCat = await seedCatalog(t, other, "https://other.example/?c={clickId}");
});
afterAll(async () => t.close());

type Headers = Record<string, string>;

function click(path: string, options: { headers?: Headers; method?: "GET" | "HEAD"; ip?: string } = {}) {
  return t.call({
    method: options.method ?? "GET",
    url: path,
    headers: { "user-agent": BROWSER, ...options.headers },
    ...(options.ip ? { remoteAddress: options.ip } : {}),
  });
}

const goPath = (linkId: number | string, sourceId: number | string, query = "") =>
  `/go/${linkId}/${sourceId}${query === "" ? "" : `?${query}`}`;

/** The click id the redirect put in the landing url's `cid` parameter. */
function clickIdOf(location: unknown, param = "cid"): string {
  const id = new URL(String(location)).searchParams.get(param);
  if (id === null) throw new Error(`no ${param} in ${String(location)}`);
  return id;
}

async function stored(clickId: string): Promise<ClickRow | undefined> {
  await t.ctx.tracking.clicks.flush();
  const [row] = await t.testDb.db.query<ClickRow>("select * from clicks where id = $1", [clickId]);
  return row && normalize(row);
}

async function clickCount(): Promise<number> {
  await t.ctx.tracking.clicks.flush();
  const [row] = await t.testDb.db.query<{ n: string }>("select count(*) as n from clicks");
  return Number(row?.n);
}

/** bigint columns come back as strings from pg and as numbers from PGlite. */
const IDS = ["link_id", "account_id", "brand_id", "program_id", "traffic_source_id", "tracker_id"] as const;
function normalize(row: ClickRow): ClickRow {
  const copy = { ...row };
  for (const key of IDS) if (copy[key] !== null) (copy as Record<string, unknown>)[key] = Number(copy[key]);
  return copy;
}

const utmOf = (row: ClickRow): unknown => (typeof row.utm === "string" ? JSON.parse(row.utm) : row.utm);

describe("GET /go/{linkId}/{sourceId}", () => {
  it("answers 302 to the link url with {clickId} filled and stores the click with its catalog ids", async () => {
    const before = t.clock.now();
    const res = await click(goPath(cat.linkId, cat.trafficSourceId));
    expect(res.statusCode).toBe(302);
    const id = clickIdOf(res.headers.location);
    expect(id).toMatch(/^clk_/);
    expect(res.headers.location).toBe(`https://brand.example/landing?cid=${id}`);
    const row = await stored(id);
    expect(row).toMatchObject({
      tenant_id: who.tenantId,
      link_id: cat.linkId,
      account_id: cat.accountId,
      brand_id: cat.brandId,
      program_id: cat.programId,
      traffic_source_id: cat.trafficSourceId,
      tracker_id: null,
      gclid: null,
      utm: null,
      country: null,
      referrer: null,
      user_agent: BROWSER,
    });
    expect(new Date(row?.at as Date).getTime()).toBe(before.getTime());
  });

  it("fills every {clickId} whatever its case, and leaves a url without one unchanged", async () => {
    const mixed = await createVia(t, who, "links", {
      name: "Mixed case",
      accountId: cat.accountId,
      brandId: cat.brandId,
      url: "https://brand.example/{CLICKID}/in?a={clickid}&b={clickId}&c={ClickId}",
    });
    const res = await click(goPath(mixed, cat.trafficSourceId));
    expect(res.statusCode).toBe(302);
    const id = clickIdOf(res.headers.location, "a");
    expect(res.headers.location).toBe(`https://brand.example/${id}/in?a=${id}&b=${id}&c=${id}`);
    expect(await stored(id)).toBeDefined();

    const plainUrl = "https://brand.example/plain?x=1&y=%7Bnot-a-placeholder%7D";
    const plain = await createVia(t, who, "links", {
      name: "Plain",
      accountId: cat.accountId,
      brandId: cat.brandId,
      url: plainUrl,
    });
    const countBefore = await clickCount();
    const res2 = await click(goPath(plain, cat.trafficSourceId));
    expect(res2.statusCode).toBe(302);
    expect(res2.headers.location).toBe(plainUrl);
    // Counted even though the landing page never learns its id.
    expect(await clickCount()).toBe(countBefore + 1);
  });

  it("stores the ad click ids, parameters, utm values, user agent, ip, referrer and country", async () => {
    const query = new URLSearchParams({
      gclid: "G-1",
      fbclid: "F-2",
      msclkid: "M-3",
      obclid: "O-4",
      pa: "alpha",
      pb: "beta",
      ext: "ext-99",
      utm_source: "news",
      utm_medium: "email",
      utm_campaign: "spring sale",
      utm_term: "shoes",
      utm_content: "banner-b",
      utm_id: "c-42",
      utm_adgroup: "ag-7",
      unrelated: "ignored",
    }).toString();
    const res = await click(goPath(cat.linkId, cat.trafficSourceId, query), {
      headers: { referer: "https://news.example/article?id=7", "cf-ipcountry": "de", "user-agent": "Agent/1.0" },
      ip: "203.0.113.7",
    });
    expect(res.statusCode).toBe(302);
    const row = await stored(clickIdOf(res.headers.location));
    expect(row).toMatchObject({
      gclid: "G-1",
      fbclid: "F-2",
      msclkid: "M-3",
      obclid: "O-4",
      parameter_a: "alpha",
      parameter_b: "beta",
      external_click_id: "ext-99",
      user_agent: "Agent/1.0",
      ip: "203.0.113.7",
      referrer: "https://news.example/article?id=7",
      country: "DE",
    });
    expect(utmOf(row as ClickRow)).toEqual({
      source: "news",
      medium: "email",
      campaign: "spring sale",
      term: "shoes",
      content: "banner-b",
      id: "c-42",
      adgroup: "ag-7",
    });
  });

  it("keeps at most 20 utm values, the first in the query", async () => {
    const query = Array.from({ length: 25 }, (_, n) => `utm_k${n}=v${n}`).join("&");
    const res = await click(goPath(cat.linkId, cat.trafficSourceId, query));
    expect(res.statusCode).toBe(302);
    const utm = utmOf((await stored(clickIdOf(res.headers.location))) as ClickRow);
    expect(utm).toEqual(Object.fromEntries(Array.from({ length: 20 }, (_, n) => [`k${n}`, `v${n}`])));
  });

  it("keeps only the utm values given, and no country for the CDN's unknown marker", async () => {
    const res = await click(goPath(cat.linkId, cat.trafficSourceId, "utm_source=only"), {
      headers: { "cf-ipcountry": "XX" },
    });
    const row = await stored(clickIdOf(res.headers.location));
    expect(utmOf(row as ClickRow)).toEqual({ source: "only" });
    expect(row?.country).toBeNull();
  });

  it("redirects a HEAD request without storing a click", async () => {
    const before = await clickCount();
    const res = await click(goPath(cat.linkId, cat.trafficSourceId, "gclid=head"), { method: "HEAD" });
    expect(res.statusCode).toBe(302);
    const id = clickIdOf(res.headers.location);
    expect(await stored(id)).toBeUndefined();
    expect(await clickCount()).toBe(before);
  });

  it.each([
    ["Googlebot", "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)"],
    ["facebookexternalhit", "facebookexternalhit/1.1 (+http://www.facebook.com/externalhit_uatext.php)"],
    ["bingbot", "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)"],
  ])("redirects a bot (%s) and stores its click flagged, never unique", async (_name, userAgent) => {
    const before = await clickCount();
    const res = await click(goPath(cat.linkId, cat.trafficSourceId), { headers: { "user-agent": userAgent } });
    expect(res.statusCode).toBe(302);
    const row = await stored(clickIdOf(res.headers.location));
    expect(row).toMatchObject({ bot_reason: "user_agent", is_unique: false });
    expect(await clickCount()).toBe(before + 1);
  });

  it("answers a 404 page for unknown, malformed and cross-tenant ids, and stores nothing", async () => {
    const before = await clickCount();
    const paths = [
      goPath(cat.linkId + 10_000, cat.trafficSourceId),
      goPath(cat.linkId, cat.trafficSourceId + 10_000),
      goPath("abc", cat.trafficSourceId),
      goPath(cat.linkId, "xyz"),
      goPath(0, cat.trafficSourceId),
      goPath(-1, cat.trafficSourceId),
      goPath("1.5", cat.trafficSourceId),
      goPath("1e3", cat.trafficSourceId),
      goPath(`${cat.linkId}abc`, cat.trafficSourceId),
      goPath("99999999999999999999999", cat.trafficSourceId),
      goPath(cat.linkId, "9223372036854775808"),
      // A link of one tenant with a traffic source of another, both ways round.
      goPath(cat.linkId, otherCat.trafficSourceId),
      goPath(otherCat.linkId, cat.trafficSourceId),
    ];
    for (const path of paths) {
      const res = await click(path);
      expect(res.statusCode, path).toBe(404);
      expect(res.headers["content-type"], path).toMatch(/^text\/html/);
      expect(res.body, path).toContain("Link not found");
      expect(res.headers.location, path).toBeUndefined();
    }
    // The same answers again, now from the cache's memory of missing ids.
    for (const path of paths) expect((await click(path)).statusCode, path).toBe(404);
    expect(await clickCount()).toBe(before);
    // Each tenant's own pair still works.
    expect((await click(goPath(otherCat.linkId, otherCat.trafficSourceId))).statusCode).toBe(302);
  });

  // Several rounds: the node that made the change must not answer from what it cached before,
  // not even in the moment before the change's broadcast comes back to it.
  it("sees a catalog change at once: a new link url", async () => {
    const owner = await seedTenancy(t);
    const own = await seedCatalog(t, owner, "https://before.example/?c={clickId}");
    const path = goPath(own.linkId, own.trafficSourceId);
    expect(String((await click(path)).headers.location)).toMatch(/^https:\/\/before\.example\/\?c=clk_/);
    for (let round = 1; round <= 15; round++) {
      // Cached now; this click is answered from memory.
      expect((await click(path)).statusCode).toBe(302);
      const patched = await t.call({
        method: "PATCH",
        url: `/api/v1/links/${own.linkId}`,
        headers: { authorization: owner.apiKey },
        payload: { url: `https://after.example/round-${round}/{clickId}` },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      const next = await click(path);
      expect(next.statusCode).toBe(302);
      expect(String(next.headers.location), `round ${round}`).toMatch(
        new RegExp(`^https://after\\.example/round-${round}/clk_`),
      );
    }
  });

  it("sees a catalog change at once: a deleted traffic source", async () => {
    const owner = await seedTenancy(t, { key: { scopes: ["traffic-sources.delete"] } });
    const own = await seedCatalog(t, owner);
    for (let round = 1; round <= 10; round++) {
      const sourceId = await createVia(t, owner, "traffic-sources", { name: `Doomed ${round}` });
      const path = goPath(own.linkId, sourceId);
      expect((await click(path)).statusCode).toBe(302);
      expect((await click(path)).statusCode).toBe(302);
      const deleted = await t.call({
        method: "DELETE",
        url: `/api/v1/traffic-sources/${sourceId}`,
        headers: { authorization: owner.apiKey },
      });
      expect(deleted.statusCode, deleted.body).toBe(200);
      const gone = await click(path);
      expect(gone.statusCode, `round ${round}`).toBe(404);
      expect(gone.body).toContain("Link not found");
    }
  });

  it("sees another node's catalog change within a second", async () => {
    const second = t.testDb.kind === "postgres" ? { ...t.testDb, db: t.testDb.openAnother() } : t.testDb;
    const nodeB = await startTestApp({ testDb: second });
    try {
      const owner = await seedTenancy(t);
      const own = await seedCatalog(t, owner, "https://before.example/{clickId}");
      const path = goPath(own.linkId, own.trafficSourceId);
      const onB = () => nodeB.call({ method: "GET", url: path, headers: { "user-agent": BROWSER } });
      expect(String((await onB()).headers.location)).toMatch(/^https:\/\/before\.example\//);
      const patched = await t.call({
        method: "PATCH",
        url: `/api/v1/links/${own.linkId}`,
        headers: { authorization: owner.apiKey },
        payload: { url: "https://after.example/{clickId}" },
      });
      expect(patched.statusCode, patched.body).toBe(200);
      const started = Date.now();
      let location = "";
      while (Date.now() - started < 1000) {
        location = String((await onB()).headers.location);
        if (location.startsWith("https://after.example/")) break;
        await new Promise((resolve) => setTimeout(resolve, 20));
      }
      expect(location).toMatch(/^https:\/\/after\.example\/clk_/);
      await nodeB.ctx.tracking.clicks.flush();
    } finally {
      await nodeB.close();
    }
  });

  it("learns of a link created after its id was asked for and found missing", async () => {
    const owner = await seedTenancy(t);
    const own = await seedCatalog(t, owner);
    // The next link id is not known yet: remembered as missing.
    const nextId = own.linkId + 1;
    expect((await click(goPath(nextId, own.trafficSourceId))).statusCode).toBe(404);
    const created = await createVia(t, owner, "links", {
      name: "Later",
      accountId: own.accountId,
      brandId: own.brandId,
      url: "https://later.example/{clickId}",
    });
    expect(created).toBe(nextId);
    const res = await click(goPath(created, own.trafficSourceId));
    expect(res.statusCode).toBe(302);
    expect(String(res.headers.location)).toMatch(/^https:\/\/later\.example\/clk_/);
  });
});

describe("the tracker of a click", () => {
  async function trackerOf(query: string): Promise<ClickRow> {
    const res = await click(goPath(cat.linkId, cat.trafficSourceId, query));
    expect(res.statusCode).toBe(302);
    const row = await stored(clickIdOf(res.headers.location));
    if (!row) throw new Error(`click with ${query} not stored`);
    return row;
  }

  async function trackers(tenant: Tenancy): Promise<{ id: number; name: string }[]> {
    const rows = await t.testDb.db.query<{ id: string; name: string }>(
      "select id, name from trackers where tenant_id = $1 order by id",
      [tenant.tenantId],
    );
    return rows.map((r) => ({ id: Number(r.id), name: r.name }));
  }

  it("stores an existing tracker's id", async () => {
    const id = await createVia(t, who, "trackers", { name: "Existing Tracker" });
    expect((await trackerOf(`tracker=${id}`)).tracker_id).toBe(id);
  });

  it("stores no tracker for an unknown id or another tenant's tracker id", async () => {
    const theirs = await createVia(t, other, "trackers", { name: "Their Tracker" });
    const mine = await trackers(who);
    expect((await trackerOf("tracker=987654321")).tracker_id).toBeNull();
    expect((await trackerOf(`tracker=${theirs}`)).tracker_id).toBeNull();
    expect((await trackerOf("tracker=0")).tracker_id).toBeNull();
    expect(await trackers(who)).toEqual(mine);
  });

  it("creates a tracker, lower-cased, for a new name on its first click", async () => {
    const row = await trackerOf("tracker=Spring%20Campaign");
    const [created] = (await trackers(who)).filter((tr) => tr.name === "spring campaign");
    expect(created).toBeDefined();
    expect(row.tracker_id).toBe(created?.id);
    // A known name, in any case, is that tracker.
    expect((await trackerOf("tracker=SPRING%20CAMPAIGN")).tracker_id).toBe(created?.id);
  });

  it("makes one tracker of a name given in two cases, within one batch and across batches", async () => {
    const [a, b] = await Promise.all([
      click(goPath(cat.linkId, cat.trafficSourceId, "tracker=CaseName")),
      click(goPath(cat.linkId, cat.trafficSourceId, "tracker=cASEnAME")),
    ]);
    const rowA = await stored(clickIdOf(a.headers.location));
    const rowB = await stored(clickIdOf(b.headers.location));
    const third = await trackerOf("tracker=CASENAME");
    const named = (await trackers(who)).filter((tr) => tr.name.toLowerCase() === "casename");
    expect(named).toEqual([{ id: expect.any(Number), name: "casename" }]);
    expect(rowA?.tracker_id).toBe(named[0]?.id);
    expect(rowB?.tracker_id).toBe(named[0]?.id);
    expect(third.tracker_id).toBe(named[0]?.id);
  });

  it("records the click and its tracker for a name whose JavaScript lower case would be longer", async () => {
    // U+0130 lower-cases to two characters in JavaScript: 30 of them would become 60, past the table's 50.
    const name = "\u0130".repeat(30);
    const row = await trackerOf(`tracker=${encodeURIComponent(name)}`);
    expect(row.tracker_id).not.toBeNull();
    const [created] = (await trackers(who)).filter((tr) => tr.id === row.tracker_id);
    expect([...(created?.name ?? "")].length).toBe(30);
    // The same name again is the same tracker.
    expect((await trackerOf(`tracker=${encodeURIComponent(name)}`)).tracker_id).toBe(row.tracker_id);
  });

  it("matches a name created through the API regardless of case", async () => {
    const id = await createVia(t, who, "trackers", { name: "Mixed Case API" });
    const count = (await trackers(who)).length;
    expect((await trackerOf("tracker=mixed%20case%20api")).tracker_id).toBe(id);
    expect((await trackerOf("tracker=MIXED%20CASE%20API")).tracker_id).toBe(id);
    expect((await trackers(who)).length).toBe(count);
  });

  it("ignores a name outside 4-50 characters but still counts the click", async () => {
    const count = (await trackers(who)).length;
    const short = await trackerOf("tracker=abc");
    const long = await trackerOf(`tracker=${"n".repeat(51)}`);
    expect(short.tracker_id).toBeNull();
    expect(long.tracker_id).toBeNull();
    expect(short.link_id).toBe(cat.linkId);
    expect(await trackers(who)).toHaveLength(count);
    // The bounds themselves are names.
    expect((await trackerOf("tracker=abcd")).tracker_id).not.toBeNull();
    expect((await trackerOf(`tracker=${"m".repeat(50)}`)).tracker_id).not.toBeNull();
    expect(await trackers(who)).toHaveLength(count + 2);
  });
});

describe("a click the database cannot take", () => {
  // One visitor's odd input must not keep every other click from being written. Each case on
  // a node of its own, so that a stuck buffer cannot spill into other tests.
  it.each([
    ["a NUL character in a parameter", "gclid=a%00b"],
    ["a tracker name of 3 characters that JavaScript counts as 6", "tracker=%F0%9F%98%80%F0%9F%98%80%F0%9F%98%80"],
  ])("with %s: the other clicks are still written", async (_what, query) => {
    const node = await startTestApp({ app: { clicks: { intervalMs: 60_000 } } });
    try {
      const owner = await seedTenancy(node);
      const own = await seedCatalog(node, owner);
      const go = (q: string) =>
        node.call({
          method: "GET",
          url: goPath(own.linkId, own.trafficSourceId, q),
          headers: { "user-agent": BROWSER },
        });
      const odd = await go(query);
      expect(odd.statusCode).toBe(302);
      const normal = await go("gclid=normal");
      const normalId = clickIdOf(normal.headers.location);
      await node.ctx.tracking.clicks.flush();
      const rows = await node.testDb.db.query<{ id: string }>("select id from clicks where id = $1", [normalId]);
      expect(rows).toHaveLength(1);
      expect(node.ctx.tracking.clicks.size).toBe(0);
    } finally {
      await node.close();
    }
  });
});

describe("graceful stop", () => {
  it("writes every buffered click before the app closes", async () => {
    const testDb = await openTestDb();
    try {
      const node = await startTestApp({ app: { clicks: { intervalMs: 60_000 } }, testDb });
      const owner = await seedTenancy(node);
      const own = await seedCatalog(node, owner);
      const n = 37;
      for (let i = 0; i < n; i++) {
        const res = await node.call({
          method: "GET",
          url: goPath(own.linkId, own.trafficSourceId, `pa=${i}${i % 3 === 0 ? "&tracker=Stop%20Tracker" : ""}`),
          headers: { "user-agent": BROWSER },
        });
        expect(res.statusCode).toBe(302);
      }
      // The timer has not fired: every click is still in memory.
      expect(node.ctx.tracking.clicks.size).toBe(n);
      const [none] = await testDb.db.query<{ n: string }>("select count(*) as n from clicks");
      expect(Number(none?.n)).toBe(0);
      await node.app.close();
      const [after] = await testDb.db.query<{ n: string; a: string }>(
        "select count(*) as n, count(distinct parameter_a) as a from clicks",
      );
      expect(Number(after?.n)).toBe(n);
      expect(Number(after?.a)).toBe(n);
      const [rollup] = await testDb.db.query<{ clicks: string }>("select sum(clicks) as clicks from daily_rollups");
      expect(Number(rollup?.clicks)).toBe(n);
    } finally {
      await testDb.dispose();
    }
  });
});
