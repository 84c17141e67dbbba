import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia, seedCatalog } from "./helpers/catalog.js";

// The performance report's breakdowns by a click's facts (device, os, browser: device_rollups) and
// by its sub-ids (parameterA, parameterB: the sub-id rollups; the raw events over at most 31 days
// where no rollup answers): clicks
// made through /go, conversions recorded on them and counted under their click's facts, bots
// counted apart, the raw path equal to the rollups' where both answer, its window bound, and
// tenants kept apart.

const PHONE =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36";
const IPHONE =
  "Mozilla/5.0 (iPhone; CPU iPhone OS 18_1 like Mac OS X) AppleWebKit/605.1.15 (KHTML, like Gecko) Version/18.1 Mobile/15E148 Safari/604.1";
const DESKTOP =
  "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/130.0 Safari/537.36";
const CRAWLER = "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)";
const NOW = "2026-11-20T12:00:00.000Z";

let t: TestApp;
let who: Tenancy;
let other: Tenancy;
let cat: CatalogFixture;
let account2: number;

type Row = Record<string, unknown>;

async function go(tenantCat: CatalogFixture, userAgent: string, query = ""): Promise<string> {
  const res = await t.call({
    method: "GET",
    url: `/go/${tenantCat.linkId}/${tenantCat.trafficSourceId}${query}`,
    headers: { "user-agent": userAgent },
    remoteAddress: "203.0.113.77",
  });
  expect(res.statusCode).toBe(302);
  return new URL(String(res.headers.location)).searchParams.get("cid") ?? "";
}

async function convert(tenancy: Tenancy, payload: Record<string, unknown>): Promise<void> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: tenancy.apiKey },
    payload,
  });
  expect(res.statusCode, res.body).toBe(201);
}

async function report(
  query: Record<string, string>,
  as: Tenancy = who,
): Promise<{ status: number; rows: Row[]; body: string }> {
  const qs = new URLSearchParams({ conversionDateFrom: "2026-11-14", conversionDateTo: "2026-11-20", ...query });
  const res = await t.call({
    method: "GET",
    url: `/api/v1/reports/events/performance?${qs}`,
    headers: { authorization: as.apiKey },
  });
  return { status: res.statusCode, rows: res.statusCode === 200 ? res.json().data : [], body: res.body };
}

/** The rows' figures keyed by the fields' values, for comparing two reports. */
const keyed = (rows: Row[], fields: string[], stats: string[]) =>
  Object.fromEntries(rows.map((r) => [fields.map((f) => String(r[f])).join("|"), stats.map((s) => r[s])]));

beforeAll(async () => {
  t = await startTestApp();
  t.clock.set(NOW);
  who = await seedTenancy(t);
  other = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  account2 = await createVia(t, who, "accounts", {
    name: "Second account",
    programId: cat.programId,
    username: "aff2",
  });
  const link2 = await createVia(t, who, "links", {
    name: "Second link",
    accountId: account2,
    brandId: cat.brandId,
    url: "https://brand.example/b?cid={clickId}",
  });
  const cat2 = { ...cat, accountId: account2, linkId: link2 };
  // Three Android phones (two on sub-id camp-1), an iPhone and a desktop on camp-2, a bot.
  const phones = [
    await go(cat, PHONE, "?pa=camp-1&pb=blue"),
    await go(cat, PHONE, "?pa=camp-1&pb=red"),
    await go(cat2, PHONE),
  ];
  const iphone = await go(cat2, IPHONE, "?pa=camp-2");
  const desktop = await go(cat, DESKTOP, "?pa=camp-2&pb=blue");
  await go(cat, CRAWLER, "?pa=camp-1");
  // The other tenant's traffic: the same sub-id, never in this tenant's report.
  const otherCat = await seedCatalog(t, other);
  const foreign = await go(otherCat, PHONE, "?pa=camp-1");
  await t.ctx.tracking.clicks.flush();
  await convert(who, { type: "FirstTimeDeposit", clickId: phones[0], externalId: "f-1", value: 50, currency: "EUR" });
  await convert(who, { type: "Signup", clickId: phones[1], externalId: "s-1" });
  await convert(who, { type: "Signup", clickId: iphone, externalId: "s-2" });
  await convert(who, { type: "Signup", clickId: desktop, externalId: "s-3", status: "rejected" });
  await convert(who, { type: "Signup", externalId: "s-4" });
  await convert(other, { type: "Signup", clickId: foreign, externalId: "o-1" });
});
afterAll(async () => t.close());

describe("breakdowns by device, os and browser", () => {
  it("count clicks and the conversions of each click under its facts, bots apart", async () => {
    const { rows, status, body } = await report({
      fields: "device,os,browser",
      stats: "clicks,botClicks,signups,firstTimeDeposit,depositAmount",
      sortBy: "device",
    });
    expect(status, body).toBe(200);
    expect(rows).toEqual([
      // The conversion without a click: unknown. A crawler has no device type; its browser is its name.
      {
        device: null,
        os: null,
        browser: null,
        clicks: 0,
        botClicks: 0,
        signups: 1,
        firstTimeDeposit: 0,
        depositAmount: 0,
      },
      {
        device: null,
        os: null,
        browser: "Googlebot",
        clicks: 0,
        botClicks: 1,
        signups: 0,
        firstTimeDeposit: 0,
        depositAmount: 0,
      },
      {
        device: "desktop",
        os: "Windows",
        browser: "Chrome",
        clicks: 1,
        botClicks: 0,
        signups: 0,
        firstTimeDeposit: 0,
        depositAmount: 0,
      },
      {
        device: "mobile",
        os: "Android",
        browser: "Chrome",
        clicks: 3,
        botClicks: 0,
        signups: 1,
        firstTimeDeposit: 1,
        depositAmount: 0,
      },
      {
        device: "mobile",
        os: "iOS",
        browser: "Safari",
        clicks: 1,
        botClicks: 0,
        signups: 1,
        firstTimeDeposit: 0,
        depositAmount: 0,
      },
    ]);
  });

  it("answer with conversion types, dates and the rollups' filters", async () => {
    const { rows } = await report({
      fields: "date,device,conversionType",
      stats: "clicks,signups",
      trafficSourceId: String(cat.trafficSourceId),
    });
    const mobile = rows.filter((r) => r.device === "mobile");
    expect(mobile.map((r) => [r.date, r.conversionType, r.clicks, r.signups])).toEqual([
      ["2026-11-20", null, 4, 0],
      ["2026-11-20", "FirstTimeDeposit", 0, 0],
      ["2026-11-20", "Signup", 0, 2],
    ]);
  });

  it("beside an account (no rollup has both) read the raw events, with the same figures", async () => {
    const stats = ["clicks", "uniqueClicks", "botClicks", "signups", "firstTimeDeposit"];
    const byDevice = await report({ fields: "device", stats: stats.join(",") });
    const byAccount = await report({ fields: "device,account", stats: stats.join(","), limit: "50" });
    expect(byAccount.status, byAccount.body).toBe(200);
    const summed: Record<string, number[]> = {};
    for (const row of byAccount.rows) {
      const key = String(row.device);
      summed[key] = stats.map((s, i) => (summed[key]?.[i] ?? 0) + Number(row[s]));
    }
    expect(summed).toEqual(keyed(byDevice.rows, ["device"], stats));
    expect(byAccount.rows.find((r) => r.device === "mobile" && r.accountId === account2)).toMatchObject({
      account: "Second account",
      clicks: 2,
      signups: 1,
    });
  });
});

describe("breakdowns by sub-id", () => {
  it("count clicks and their conversions by pa and pb of the click URL", async () => {
    const { rows, status, body } = await report({
      fields: "parameterA",
      stats: "clicks,botClicks,signups,firstTimeDeposit",
    });
    expect(status, body).toBe(200);
    expect(keyed(rows, ["parameterA"], ["clicks", "botClicks", "signups", "firstTimeDeposit"])).toEqual({
      "camp-1": [2, 1, 1, 1],
      // The desktop's signup is rejected: not counted by default.
      "camp-2": [2, 0, 1, 0],
      null: [1, 0, 1, 0],
    });
    const both = await report({ fields: "parameterA,parameterB", stats: "clicks", sortBy: "-clicks" });
    expect(both.rows.map((r) => [r.parameterA, r.parameterB, r.clicks])).toContainEqual(["camp-1", "blue", 1]);
  });

  it("count the statuses asked for, in a local time zone, sorted and paged", async () => {
    const rejected = await report({ fields: "parameterA", stats: "signups", status: "rejected" });
    expect(rejected.rows.filter((r) => Number(r.signups) > 0)).toEqual([{ parameterA: "camp-2", signups: 1 }]);
    const local = await report({
      fields: "date,parameterA",
      stats: "clicks",
      timeZone: "Asia/Tokyo",
      sortBy: "-clicks",
      limit: "1",
    });
    expect(local.status, local.body).toBe(200);
    // 12:00 UTC is 21:00 in Tokyo, the same day.
    expect(local.rows).toEqual([{ date: "2026-11-20", parameterA: "camp-1", clicks: 2 }]);
  });

  it("read from the raw events (both sub-ids, a device with a link) refuse a window longer than 31 days or older than they are kept", async () => {
    const long = await report({ fields: "parameterA,parameterB", conversionDateFrom: "2026-10-01" });
    expect(long.status).toBe(400);
    expect(long.body).toContain("conversionDateFrom");
    expect(long.body).toContain("at most 31 days");
    const old = await report({
      fields: "device,link",
      conversionDateFrom: "2026-05-01",
      conversionDateTo: "2026-05-10",
    });
    expect(old.status).toBe(400);
    expect(old.body).toContain("kept 120 days");
    // The device or a sub-id alone reads its rollup: any window.
    expect((await report({ fields: "device", conversionDateFrom: "2025-11-21" })).status).toBe(200);
    expect((await report({ fields: "date,parameterA", conversionDateFrom: "2025-11-21" })).status).toBe(200);
  });

  it("never show another tenant's events", async () => {
    const mine = await report({ fields: "parameterA", stats: "clicks,signups" });
    expect(mine.rows.reduce((n, r) => n + Number(r.clicks), 0)).toBe(5);
    const theirs = await report({ fields: "parameterA,device", stats: "clicks,signups" }, other);
    expect(theirs.rows).toEqual([{ parameterA: "camp-1", device: "mobile", clicks: 1, signups: 1 }]);
  });
});
