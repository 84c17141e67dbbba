import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY_MS } from "../src/platform/durations.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;

beforeAll(async () => {
  t = await startTestApp();
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
});
afterAll(async () => t.close());

async function count(table: string): Promise<number> {
  const [row] = await t.testDb.db.query<{ n: number }>(`select count(*)::int as n from ${table} where tenant_id = $1`, [
    who.tenantId,
  ]);
  return row?.n ?? 0;
}

/** A click (with a page view and a conversion) made at the clock's current time. */
async function traffic(tag: string): Promise<void> {
  // A browser's user agent: the inject default ("lightMyRequest") is an HTTP tool's, a bot's.
  const go = await t.call({
    method: "GET",
    url: `/go/${cat.linkId}/${cat.trafficSourceId}?ext=${tag}`,
    headers: {
      "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Safari/537.36",
    },
  });
  const clickId = new URL(String(go.headers.location)).searchParams.get("cid");
  const view = await t.call({
    method: "POST",
    url: "/collect",
    payload: { clickId, url: `https://brand.example/${tag}` },
  });
  expect(view.statusCode).toBe(201);
  const conversion = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: who.apiKey },
    payload: { type: "Signup", clickId, occurredAt: t.clock.now().toISOString() },
  });
  expect(conversion.statusCode).toBe(201);
}

describe("event retention", () => {
  it("deletes clicks, conversions and page views older than 120 days and keeps the rollups", async () => {
    const start = new Date("2026-06-01T12:00:00Z");
    t.clock.set(start);
    await traffic("old");
    t.clock.set(new Date(start.getTime() + 100 * DAY_MS));
    await traffic("recent");
    await t.ctx.tracking.clicks.flush();
    expect(await count("clicks")).toBe(2);

    const job = t.ctx.jobs.find("retention");
    if (!job) throw new Error("no retention job");
    // 121 days after the first click, 21 after the second.
    const summary = await job.run(new Date(start.getTime() + 121 * DAY_MS));
    expect(summary).toMatchObject({ deleted: { clicks: 1, conversions: 1, page_views: 1 } });
    expect(await count("clicks")).toBe(1);
    expect(await count("conversions")).toBe(1);
    expect(await count("page_views")).toBe(1);
    const [kept] = await t.testDb.db.query<{ ext: string }>(
      "select external_click_id as ext from clicks where tenant_id = $1",
      [who.tenantId],
    );
    expect(kept?.ext).toBe("recent");

    // Reports keep their history: the rollups still hold both days.
    const [rolled] = await t.testDb.db.query<{ clicks: number; signups: number }>(
      "select sum(clicks)::int as clicks, sum(signup_count)::int as signups from daily_rollups where tenant_id = $1",
      [who.tenantId],
    );
    expect(rolled).toEqual({ clicks: 2, signups: 2 });
  });
});
