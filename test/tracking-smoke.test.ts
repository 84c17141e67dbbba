import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

describe("smoke", () => {
  it("click, conversion, page view, rollup", async () => {
    const go = await t.call({
      method: "GET",
      url: `/go/${cat.linkId}/${cat.trafficSourceId}?gclid=G1&tracker=MyTracker`,
      headers: { "user-agent": "Mozilla/5.0" },
    });
    expect(go.statusCode).toBe(302);
    const location = String(go.headers.location);
    const clickId = new URL(location).searchParams.get("cid");
    expect(clickId).toMatch(/^clk_/);
    const pv = await t.call({
      method: "POST",
      url: "/collect",
      payload: { clickId, url: "https://brand.example/a", title: "A" },
    });
    expect(pv.statusCode, pv.body).toBe(201);
    const conv = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Deposit", clickId, value: 19.99, currency: "eur", externalId: "x1" },
    });
    expect(conv.statusCode, conv.body).toBe(201);
    expect(conv.json().data).toMatchObject({
      attributed: true,
      attributionSource: "google",
      value: 19.99,
      currency: "EUR",
      linkId: cat.linkId,
    });
    const dup = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Deposit", clickId, value: 19.99, currency: "EUR", externalId: "x1" },
    });
    expect(dup.statusCode).toBe(200);
    expect(dup.json().data.duplicate).toBe(true);
    const pb = await t.call({ method: "GET", url: `/postback/${who.postbackKey}?type=Signup&clickId=nope` });
    expect(pb.statusCode, pb.body).toBe(201);
    expect(pb.json().attributed).toBe(false);
    const one = await t.call({
      method: "GET",
      url: `/api/v1/conversions/${conv.json().data.id}`,
      headers: { authorization: who.apiKey },
    });
    expect(one.json().data.pageViews).toHaveLength(1);
    const rollups = await t.testDb.db.query("select * from daily_rollups");
    console.log(rollups);
    const gen = await t.call({
      method: "GET",
      url: `/api/v1/link-generator/router/brand-link/${cat.linkId}/traffic-source/${cat.trafficSourceId}/url?tracker=MyTracker`,
      headers: { authorization: who.apiKey },
    });
    console.log(gen.body);
    const list = await t.call({
      method: "GET",
      url: "/api/v1/conversions?dateFrom=2020-01-01",
      headers: { authorization: who.apiKey },
    });
    expect(list.json().pagination.total).toBe(2);
  });
});
