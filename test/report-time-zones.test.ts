import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { parseDateBound } from "../src/platform/http/dates.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";

// Days in the account's time zone. Deposits in USD (the tenant's currency), each a power of two
// so that every sum tells which deposits it holds:
//   I     1  2026-10-24T22:30Z  Berlin Sun 10-25 00:30 CEST (UTC 10-24)
//   J     2  2026-10-25T22:30Z  Berlin Sun 10-25 23:30 CET  (UTC 10-25): Berlin's 10-25 has 25 hours
//   K     4  2026-10-25T23:30Z  Berlin Mon 10-26 00:30      (UTC 10-25)
//   F     8  2026-11-01T03:30Z  New York Sat 10-31 23:30 EDT
//   A    16  2026-11-01T04:30Z  New York Sun 11-01 00:30 EDT
//   B    32  2026-11-01T05:30Z  New York 01:30 EDT (the first pass of the repeated hour)
//   C    64  2026-11-01T06:30Z  New York 01:30 EST (the second pass)
//   H   128  2026-11-01T18:10Z  Kathmandu (+05:45) 11-01 23:55
//   G   256  2026-11-01T18:20Z  Kathmandu 11-02 00:05
//   D   512  2026-11-02T04:30Z  New York Sun 11-01 23:30 EST: New York's 11-01 has 25 hours
//   E  1024  2026-11-02T05:30Z  New York Mon 11-02 00:30 EST
const DEPOSITS: [string, number][] = [
  ["2026-10-24T22:30:00Z", 1],
  ["2026-10-25T22:30:00Z", 2],
  ["2026-10-25T23:30:00Z", 4],
  ["2026-11-01T03:30:00Z", 8],
  ["2026-11-01T04:30:00Z", 16],
  ["2026-11-01T05:30:00Z", 32],
  ["2026-11-01T06:30:00Z", 64],
  ["2026-11-01T18:10:00Z", 128],
  ["2026-11-01T18:20:00Z", 256],
  ["2026-11-02T04:30:00Z", 512],
  ["2026-11-02T05:30:00Z", 1024],
];
const PERFORMANCE = "/api/v1/reports/events/performance";
const STATS = "deposits,depositAmount";

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;

const get = async (url: string, query: Record<string, string>) =>
  t.call({
    method: "GET",
    url: `${url}?${new URLSearchParams(query).toString()}`,
    headers: { authorization: who.apiKey },
  });

const report = async (query: Record<string, string>) => {
  const res = await get(PERFORMANCE, { stats: STATS, ...query });
  expect(res.statusCode, res.body).toBe(200);
  return res.json() as { data: Record<string, unknown>[]; meta: { timeZone: string } };
};

const patchSettings = (payload: Record<string, unknown>) =>
  t.call({ method: "PATCH", url: "/api/v1/settings", headers: { authorization: who.apiKey }, payload });

beforeAll(async () => {
  t = await startTestApp();
  t.clock.set("2026-10-20T09:00:00.000Z");
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  const clickId = await clickThrough(t, cat);
  await t.ctx.tracking.clicks.flush();
  t.clock.set("2026-11-05T12:00:00.000Z");
  for (const [occurredAt, value] of DEPOSITS) {
    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Deposit", clickId, value: String(value), occurredAt },
    });
    expect(res.statusCode, res.body).toBe(201);
  }
}, 120_000);
afterAll(async () => t?.close());

describe("the account's time zone", () => {
  it("is UTC until set, takes any case, and refuses a name that is no zone, naming the field", async () => {
    const before = await t.call({ method: "GET", url: "/api/v1/settings", headers: { authorization: who.apiKey } });
    expect(before.json().data.timeZone).toBe("UTC");
    const bad = await patchSettings({ timeZone: "Mars/Olympus_Mons" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("timeZone");
    const set = await patchSettings({ timeZone: "america/new_york" });
    expect(set.statusCode, set.body).toBe(200);
    expect(set.json().data.timeZone).toBe("America/New_York");
    // Reports read days in it when the request names none.
    const body = await report({ fields: "date", conversionDateFrom: "2026-11-01", conversionDateTo: "2026-11-01" });
    expect(body.meta.timeZone).toBe("America/New_York");
    expect(body.data).toEqual([{ date: "2026-11-01", deposits: 6, depositAmount: 16 + 32 + 64 + 128 + 256 + 512 }]);
    const back = await patchSettings({ timeZone: "UTC" });
    expect(back.json().data.timeZone).toBe("UTC");
    // Each change is in the audit log, with the zone set.
    const audit = await t.call({
      method: "GET",
      url: "/api/v1/audit-log?limit=100",
      headers: { authorization: who.apiKey },
    });
    expect(audit.statusCode, audit.body).toBe(200);
    const zones = (audit.json().data as { action: string; details: { timeZone?: string } }[])
      .filter((item) => item.action === "tenant.time_zone_set")
      .map((item) => item.details.timeZone);
    expect(zones.sort()).toEqual(["America/New_York", "UTC"]);
  });
});

describe("a report in a time zone", () => {
  it("reads UTC days by default", async () => {
    const body = await report({ fields: "date", conversionDateFrom: "2026-11-01", conversionDateTo: "2026-11-02" });
    expect(body.meta.timeZone).toBe("UTC");
    expect(body.data).toEqual([
      { date: "2026-11-01", deposits: 6, depositAmount: 8 + 16 + 32 + 64 + 128 + 256 },
      { date: "2026-11-02", deposits: 2, depositAmount: 512 + 1024 },
    ]);
  });

  it("gives New York's 25-hour day and Berlin's, each deposit in its local day", async () => {
    const ny = await report({
      fields: "date",
      conversionDateFrom: "2026-10-31",
      conversionDateTo: "2026-11-02",
      timeZone: "America/New_York",
    });
    expect(ny.meta.timeZone).toBe("America/New_York");
    expect(ny.data).toEqual([
      { date: "2026-10-31", deposits: 1, depositAmount: 8 },
      { date: "2026-11-01", deposits: 6, depositAmount: 16 + 32 + 64 + 128 + 256 + 512 },
      { date: "2026-11-02", deposits: 1, depositAmount: 1024 },
    ]);
    const berlin = await report({
      fields: "date",
      conversionDateFrom: "2026-10-25",
      conversionDateTo: "2026-10-26",
      timeZone: "Europe/Berlin",
    });
    expect(berlin.data).toEqual([
      { date: "2026-10-25", deposits: 2, depositAmount: 1 + 2 },
      { date: "2026-10-26", deposits: 1, depositAmount: 4 },
    ]);
    // Without a date field, the window alone is local: Berlin's 10-25 is 25 hours long.
    const total = await report({
      conversionDateFrom: "2026-10-25",
      conversionDateTo: "2026-10-25",
      timeZone: "Europe/Berlin",
    });
    expect(total.data).toEqual([{ deposits: 2, depositAmount: 3 }]);
  });

  it("splits days at a :45 offset (Kathmandu)", async () => {
    const body = await report({
      fields: "date",
      conversionDateFrom: "2026-11-01",
      conversionDateTo: "2026-11-02",
      timeZone: "Asia/Kathmandu",
    });
    expect(body.data).toEqual([
      { date: "2026-11-01", deposits: 5, depositAmount: 8 + 16 + 32 + 64 + 128 },
      { date: "2026-11-02", deposits: 3, depositAmount: 256 + 512 + 1024 },
    ]);
    const hours = await report({
      fields: "hour",
      conversionDateFrom: "2026-11-01T23:00",
      conversionDateTo: "2026-11-02T00:59",
      timeZone: "Asia/Kathmandu",
    });
    expect(hours.data).toEqual([
      { hour: "2026-11-01T23:00+05:45", deposits: 1, depositAmount: 128 },
      { hour: "2026-11-02T00:00+05:45", deposits: 1, depositAmount: 256 },
    ]);
  });

  it("gives local hours with their offset, the repeated hour twice", async () => {
    const body = await report({
      fields: "hour",
      conversionDateFrom: "2026-11-01",
      conversionDateTo: "2026-11-01",
      timeZone: "America/New_York",
      sortBy: "hour",
    });
    expect(body.data).toEqual([
      { hour: "2026-11-01T00:00-04:00", deposits: 1, depositAmount: 16 },
      { hour: "2026-11-01T01:00-04:00", deposits: 1, depositAmount: 32 },
      { hour: "2026-11-01T01:00-05:00", deposits: 1, depositAmount: 64 },
      { hour: "2026-11-01T13:00-05:00", deposits: 2, depositAmount: 128 + 256 },
      { hour: "2026-11-01T23:00-05:00", deposits: 1, depositAmount: 512 },
    ]);
  });

  it("groups local weeks and months, and by type", async () => {
    const months = await report({
      fields: "month",
      conversionDateFrom: "2026-10-01",
      conversionDateTo: "2026-11-30",
      timeZone: "America/New_York",
    });
    expect(months.data).toEqual([
      { month: "2026-10", deposits: 4, depositAmount: 1 + 2 + 4 + 8 },
      { month: "2026-11", deposits: 7, depositAmount: 2048 - 16 },
    ]);
    const weeks = await report({
      fields: "week,conversionType",
      conversionDateFrom: "2026-10-26",
      conversionDateTo: "2026-11-08",
      timeZone: "America/New_York",
    });
    // Sat 10-31 23:30 in New York is in the week of Monday 10-26; Sun 11-01 too; Mon 11-02 starts the next.
    const deposits = weeks.data.filter((r) => r.conversionType === "Deposit");
    expect(deposits).toEqual([
      { week: "2026-10-26", conversionType: "Deposit", deposits: 7, depositAmount: 8 + 16 + 32 + 64 + 128 + 256 + 512 },
      { week: "2026-11-02", conversionType: "Deposit", deposits: 1, depositAmount: 1024 },
    ]);
  });

  it("reads a date-time without an offset as wall time, the repeated hour at its first pass", async () => {
    const body = await report({
      conversionDateFrom: "2026-11-01T01:00",
      conversionDateTo: "2026-11-01T01:59:59",
      timeZone: "America/New_York",
    });
    expect(body.data).toEqual([{ deposits: 1, depositAmount: 32 }]);
    // With an offset it is that instant, whatever the zone.
    const instant = await report({
      conversionDateFrom: "2026-11-01T01:00-05:00",
      conversionDateTo: "2026-11-01T01:59:59-05:00",
      timeZone: "America/New_York",
    });
    expect(instant.data).toEqual([{ deposits: 1, depositAmount: 64 }]);
  });

  it("counts a window's days in its zone against the 400-day limit", async () => {
    const zoned = { timeZone: "America/New_York", conversionDateTo: "2026-11-05" };
    const longest = await get(PERFORMANCE, { ...zoned, conversionDateFrom: "2025-10-02" });
    expect(longest.statusCode, longest.body).toBe(200);
    const over = await get(PERFORMANCE, { ...zoned, conversionDateFrom: "2025-10-01" });
    expect(over.statusCode).toBe(400);
    expect(over.json().message).toContain("spans 401");
  });

  it("refuses a zone that does not exist, naming timeZone", async () => {
    const res = await get(PERFORMANCE, { timeZone: "Europe/Atlantis" });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain("timeZone");
    const offset = await get(PERFORMANCE, { timeZone: "+05:30" });
    expect(offset.statusCode).toBe(400);
  });

  it("applies to the composites' windows and the conversions list's date filters", async () => {
    const composite = await get("/api/v1/composites/accounts/metrics", {
      metricsFrom: "2026-11-01",
      metricsTo: "2026-11-01",
      timeZone: "Asia/Kathmandu",
    });
    expect(composite.statusCode, composite.body).toBe(200);
    expect(composite.json().meta.timeZone).toBe("Asia/Kathmandu");
    const account = composite.json().data.find((a: { id: number }) => a.id === cat.accountId);
    expect(account.metrics.depositAmount).toBe(8 + 16 + 32 + 64 + 128);
    const list = await get("/api/v1/conversions", {
      dateFrom: "2026-11-01",
      dateTo: "2026-11-01",
      timeZone: "America/New_York",
      limit: "50",
    });
    expect(list.statusCode, list.body).toBe(200);
    const values = list.json().data.map((c: { value: string }) => Number(c.value));
    expect(values.sort((a: number, b: number) => a - b)).toEqual([16, 32, 64, 128, 256, 512]);
  });
});

describe("a date parameter", () => {
  it("moves a wall time a DST change skips forward by the gap", () => {
    expect(parseDateBound("from", "2026-03-29T02:30", "from", "Europe/Berlin")?.toISOString()).toBe(
      "2026-03-29T01:30:00.000Z",
    );
    expect(parseDateBound("to", "2026-03-29", "to", "Europe/Berlin")?.toISOString()).toBe("2026-03-29T21:59:59.999Z");
    expect(parseDateBound("from", "2026-11-01", "from", "Pacific/Chatham")?.toISOString()).toBe(
      "2026-10-31T10:15:00.000Z",
    );
    expect(parseDateBound("from", "2026-11-01", "from", "America/St_Johns")?.toISOString()).toBe(
      "2026-11-01T02:30:00.000Z",
    );
  });
});
