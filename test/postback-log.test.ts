import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";

// GET /api/v1/postback-log (docs/postback-log.md): every call of /postback/{key} and every item of
// POST /api/v1/conversions with its outcome (recorded, duplicate, statusChanged, refused with the
// reason and field), the query kept with secrets redacted, the filters, tenant isolation.

let t: TestApp;
let who: Tenancy;
let other: Tenancy;
let cat: CatalogFixture;
let clickId: string;

interface Line {
  id: string;
  at: string;
  via: string;
  outcome: string;
  reason: string | null;
  field: string | null;
  conversionId: string | null;
  clickId: string | null;
  externalId: string | null;
  type: string | null;
  query: Record<string, string>;
}

beforeAll(async () => {
  t = await startTestApp();
  who = await seedTenancy(t);
  other = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  clickId = await clickThrough(t, cat);
});
afterAll(async () => t.close());

async function log(query: string, as = who.bearer): Promise<{ status: number; items: Line[]; body: string }> {
  const res = await t.call({ method: "GET", url: `/api/v1/postback-log?${query}`, headers: { authorization: as } });
  return { status: res.statusCode, items: res.statusCode === 200 ? res.json().data : [], body: res.body };
}

const postback = (key: string, query: string) => t.call({ method: "GET", url: `/postback/${key}?${query}` });

describe("the postback log", () => {
  it("logs a postback recorded, then its duplicate and a status change, with the query's secrets redacted", async () => {
    const query = `clickId=${clickId}&type=signup&externalId=pl-1&token=s3cr3t-value&sub=abc`;
    expect((await postback(who.postbackKey, query)).statusCode).toBe(201);
    expect((await postback(who.postbackKey, query)).statusCode).toBe(200);
    expect((await postback(who.postbackKey, `${query}&status=rejected`)).statusCode).toBe(200);
    const { items } = await log("externalId=pl-1");
    expect(items.map((l) => l.outcome)).toEqual(["statusChanged", "duplicate", "recorded"]);
    const recorded = items[2];
    expect(recorded).toMatchObject({ via: "postback", clickId, externalId: "pl-1", type: "Signup", reason: null });
    expect(recorded?.conversionId).toMatch(/^cnv_/);
    expect(items.every((l) => l.conversionId === recorded?.conversionId)).toBe(true);
    expect(recorded?.query).toMatchObject({ clickId, type: "signup", externalId: "pl-1", sub: "abc" });
    expect(recorded?.query.token).toBe("[redacted]");
    expect(JSON.stringify(items)).not.toContain("s3cr3t-value");
    expect(JSON.stringify(items)).not.toContain(who.postbackKey);
  });

  it("logs a refused postback with its reason and field, for the key's tenant", async () => {
    const res = await postback(who.postbackKey, `clickId=${clickId}&type=Signup&externalId=pl-2&value=abc`);
    expect(res.statusCode).toBe(400);
    const { items } = await log("outcome=refused&externalId=pl-2");
    expect(items).toHaveLength(1);
    expect(items[0]).toMatchObject({ via: "postback", outcome: "refused", field: "value", conversionId: null });
    expect(items[0]?.reason).toMatch(/value/);
    // A type the schema refuses is logged as sent.
    expect((await postback(who.postbackKey, "type=Nonsense&externalId=pl-3")).statusCode).toBe(400);
    const [bad] = (await log("externalId=pl-3")).items;
    expect(bad).toMatchObject({ outcome: "refused", type: "Nonsense", field: "type" });
  });

  it("never lists a call with an unknown key, which belongs to no tenant", async () => {
    expect((await postback("not-a-key-of-anyone", "type=Signup&externalId=pl-unknown")).statusCode).toBe(404);
    expect((await log("externalId=pl-unknown")).items).toEqual([]);
    expect((await log("externalId=pl-unknown", other.bearer)).items).toEqual([]);
  });

  it("logs every item of an API batch with its outcome", async () => {
    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: {
        items: [
          { type: "Deposit", externalId: "api-1", value: 10, currency: "EUR" },
          { type: "Deposit", externalId: "api-1", value: 10, currency: "EUR" },
        ],
      },
    });
    expect(res.statusCode, res.body).toBe(201);
    const { items } = await log("externalId=api-1");
    expect(items.map((l) => [l.via, l.outcome]).sort()).toEqual([
      ["api", "duplicate"],
      ["api", "recorded"],
    ]);
  });

  it("logs each item of a refused API batch, the bad one with its own field", async () => {
    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: {
        items: [
          { type: "Deposit", externalId: "api-ok", value: 5, currency: "EUR" },
          { type: "Deposit", externalId: "api-bad", value: 5, currency: "EURO" },
        ],
      },
    });
    expect(res.statusCode).toBe(400);
    const [bad] = (await log("externalId=api-bad")).items;
    expect(bad).toMatchObject({ via: "api", outcome: "refused", field: "currency" });
    const [ok] = (await log("externalId=api-ok")).items;
    expect(ok?.outcome).toBe("refused");
    expect(ok?.reason).toMatch(/other items/);
  });

  it("filters by outcome, type, clickId and window, and keeps tenants apart", async () => {
    const refused = await log("outcome=refused");
    expect(refused.items.length).toBeGreaterThanOrEqual(3);
    expect(refused.items.every((l) => l.outcome === "refused")).toBe(true);
    const signups = await log("type=signup");
    expect(signups.items.length).toBeGreaterThan(0);
    expect(signups.items.every((l) => l.type?.toLowerCase() === "signup")).toBe(true);
    expect((await log(`clickId=${clickId}`)).items.length).toBeGreaterThanOrEqual(3);
    expect((await log("dateTo=2000-01-01")).items).toEqual([]);
    expect((await log("", other.bearer)).items).toEqual([]);
  });

  it("refuses bad filters naming the field", async () => {
    const bad = await log("outcome=lost");
    expect(bad.status).toBe(400);
    expect(bad.body).toContain("outcome");
    expect((await log("dateFrom=yesterday")).body).toContain("dateFrom");
    expect((await log("limit=501")).body).toContain("limit");
  });
});
