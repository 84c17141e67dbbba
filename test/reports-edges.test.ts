import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

const REPORT = "/api/v1/reports/events/performance";
let t: TestApp;
let who: Tenancy;

beforeAll(async () => {
  t = await startTestApp();
  t.clock.set("2026-11-21T12:00:00Z");
  who = await seedTenancy(t);
  await generateTraffic(t.testDb.db, who.tenantId, { days: 5, clicks: 400, now: t.clock.now(), seed: 11 });
});
afterAll(async () => t.close());

const get = (url: string) => t.call({ method: "GET", url, headers: { authorization: who.apiKey } });

describe("performance report edges", () => {
  it("still counts the rows on a page past the end", async () => {
    const all = await get(`${REPORT}?fields=date&stats=clicks`);
    const total = all.json().pagination?.total ?? 0;
    expect(total).toBeGreaterThan(1);
    const past = await get(`${REPORT}?fields=date&stats=clicks&offset=${total + 3}`);
    expect(past.json().data).toEqual([]);
    expect(past.json().pagination).toMatchObject({ offset: total + 3, total });
  });

  it("refuses a parameter name in another case instead of ignoring it", async () => {
    const res = await get(`${REPORT}?fields=date&Limit=1`);
    expect(res.statusCode).toBe(400);
    expect(res.json().data.errors[0].path).toBe("Limit");
  });

  it("names the parameter given when a lone from-date is after today", async () => {
    const res = await get(`${REPORT}?conversionDateFrom=2027-01-01`);
    expect(res.statusCode).toBe(400);
    expect(res.json().data.errors[0].path).toBe("conversionDateFrom");
  });

  it("sorts an entity field by the name it shows", async () => {
    const res = await get(`${REPORT}?fields=brand&stats=clicks&sortBy=-brand`);
    const names = (res.json().data as { brand: string }[]).map((row) => row.brand);
    expect(names.length).toBeGreaterThan(1);
    expect(names).toEqual([...names].sort().reverse());
  });
});
