import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";

// Reports in one currency: each amount converted at the rate in force on its event's UTC day.
// The tenant's own rates (units per 1 EUR):
//   Fri 2026-10-30: USD 1.10, GBP 0.80   (in force over the weekend)
//   Mon 2026-11-02: USD 1.20, GBP 0.75
// Deposits on one click:
//   Sat 10:00  100 USD              -> 100 USD
//   Sat 10:00  100 GBP (x 1.10/0.80) -> 137.5 USD
//   Mon 12:00  100 GBP (x 1.20/0.75) -> 160 USD
//   Mon 12:00   50 EUR (x 1.20)      -> 60 USD
//   Mon 12:00  10000 JPY: no JPY rate -> left out, named in meta.unconverted
const PERFORMANCE = "/api/v1/reports/events/performance";
const WINDOW = { conversionDateFrom: "2026-10-30", conversionDateTo: "2026-11-02" };

let t: TestApp;
let who: Tenancy;
let other: Tenancy;
let cat: CatalogFixture;

const get = async (url: string, query: Record<string, string>, as: Tenancy = who) => {
  const res = await t.call({
    method: "GET",
    url: `${url}?${new URLSearchParams(query).toString()}`,
    headers: { authorization: as.apiKey },
  });
  return res;
};

const putRates = async (date: string, rates: Record<string, number>, as: Tenancy = who) => {
  const res = await t.call({
    method: "PUT",
    url: "/api/v1/exchange-rates",
    headers: { authorization: as.apiKey },
    payload: { date, rates },
  });
  expect(res.statusCode, res.body).toBe(200);
};

beforeAll(async () => {
  t = await startTestApp();
  t.clock.set("2026-10-31T09:00:00.000Z");
  who = await seedTenancy(t);
  other = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  const clickId = await clickThrough(t, cat);
  await t.ctx.tracking.clicks.flush();
  await putRates("2026-10-30", { USD: 1.1, GBP: 0.8 });
  await putRates("2026-11-02", { USD: 1.2, GBP: 0.75 });
  // The other tenant's rates never apply here.
  await putRates("2026-10-01", { JPY: 160, USD: 5, GBP: 5 }, other);
  t.clock.set("2026-11-02T18:00:00.000Z");
  const deposits: [string, string, string][] = [
    ["100.00", "USD", "2026-10-31T10:00:00.000Z"],
    ["100.00", "GBP", "2026-10-31T10:00:00.000Z"],
    ["100.00", "GBP", "2026-11-02T12:00:00.000Z"],
    ["50.00", "EUR", "2026-11-02T12:00:00.000Z"],
    ["10000", "JPY", "2026-11-02T12:00:00.000Z"],
  ];
  for (const [value, currency, occurredAt] of deposits) {
    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Deposit", clickId, value, currency, occurredAt },
    });
    expect(res.statusCode, res.body).toBe(201);
  }
}, 120_000);
afterAll(async () => t?.close());

describe("a report's amounts", () => {
  it("are converted to the tenant's currency at the rate of each event's day, weekends at the last rate", async () => {
    const res = await get(PERFORMANCE, { ...WINDOW, stats: "deposits,depositAmount" });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.data).toEqual([{ deposits: 5, depositAmount: 457.5 }]);
    expect(body.meta).toEqual({
      timeZone: "UTC",
      currency: "USD",
      status: ["pending", "approved"],
      unconverted: [{ currency: "JPY", conversions: 1 }],
    });
  });

  it("by day, each day at its own rates", async () => {
    const res = await get(PERFORMANCE, { ...WINDOW, fields: "date", stats: "depositAmount" });
    expect(res.json().data).toEqual([
      { date: "2026-10-31", depositAmount: 237.5 },
      { date: "2026-11-02", depositAmount: 220 },
    ]);
  });

  it("in the currency a request asks for, which overrides the setting", async () => {
    const res = await get(PERFORMANCE, { ...WINDOW, stats: "depositAmount", currency: "eur" });
    // 100/1.10 + 100/0.80 + 100/0.75 + 50
    expect(res.json().data).toEqual([{ depositAmount: 399.2424 }]);
    expect(res.json().meta.currency).toBe("EUR");
  });

  it("re-converts history when the reporting currency changes, and back", async () => {
    const patch = async (reportingCurrency: string | null) => {
      const res = await t.call({
        method: "PATCH",
        url: "/api/v1/settings",
        headers: { authorization: who.apiKey },
        payload: { reportingCurrency },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data;
    };
    const set = await patch("gbp");
    expect(set.reportingCurrency).toBe("GBP");
    expect(set.reportingCurrencyFollowsDefault).toBe(false);
    const inPounds = await get(PERFORMANCE, { ...WINDOW, stats: "depositAmount" });
    // 100 x 0.80/1.10 + 100 + 100 + 50 x 0.75
    expect(inPounds.json().data).toEqual([{ depositAmount: 310.2273 }]);
    expect(inPounds.json().meta.currency).toBe("GBP");
    const settings = await patch(null);
    expect(settings.reportingCurrency).toBe(settings.defaultCurrency);
    expect(settings.reportingCurrencyFollowsDefault).toBe(true);
    const inDollars = await get(PERFORMANCE, { ...WINDOW, stats: "depositAmount" });
    expect(inDollars.json().data).toEqual([{ depositAmount: 457.5 }]);
  });

  it("follow a rate stored later for a past day", async () => {
    await putRates("2026-11-01", { JPY: 176 });
    const res = await get(PERFORMANCE, { ...WINDOW, stats: "depositAmount" });
    // 10000 JPY at 1.20/176 (the Sunday rate, the latest on or before Monday) = 68.1818...
    expect(res.json().data).toEqual([{ depositAmount: 525.6818 }]);
    expect(res.json().meta.unconverted).toEqual([]);
  });

  it("of an exact window read raw at its edge are converted too", async () => {
    const res = await get(PERFORMANCE, {
      conversionDateFrom: "2026-10-31T11:00:00Z",
      conversionDateTo: "2026-11-02",
      stats: "depositAmount",
    });
    expect(res.json().data).toEqual([{ depositAmount: 288.1818 }]);
  });

  it("in the composites, with the same meta", async () => {
    const res = await get("/api/v1/composites/accounts/metrics", {
      metricsFrom: "2026-10-30",
      metricsTo: "2026-11-02",
      currency: "USD",
    });
    expect(res.statusCode, res.body).toBe(200);
    const account = res.json().data.find((a: { id: number }) => a.id === cat.accountId);
    expect(account.metrics.depositAmount).toBe(525.6818);
    expect(res.json().meta).toEqual({
      timeZone: "UTC",
      currency: "USD",
      status: ["pending", "approved"],
      unconverted: [],
    });
  });

  it("without money stats need no rate, and say the currency anyway", async () => {
    const res = await get(PERFORMANCE, { ...WINDOW, stats: "deposits" }, other);
    expect(res.json().data).toEqual([{ deposits: 0 }]);
    expect(res.json().meta.currency).toBe("USD");
  });

  it("refuses an unknown currency, naming the parameter", async () => {
    const res = await get(PERFORMANCE, { ...WINDOW, currency: "XYZ" });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("currency");
    const setting = await t.call({
      method: "PATCH",
      url: "/api/v1/settings",
      headers: { authorization: who.apiKey },
      payload: { reportingCurrency: "ABC" },
    });
    expect(setting.statusCode).toBe(400);
    expect(setting.body).toContain("reportingCurrency");
  });
});
