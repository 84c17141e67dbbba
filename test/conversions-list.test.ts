import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createUser } from "../src/features/tenants/index.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, createVia, seedCatalog } from "./helpers/catalog.js";

// GET /api/v1/conversions (docs/conversions.md): the catalog items' names, the searches by click
// id and externalId, the type, status and traffic source lists, and a 400 naming each bad one.

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let otherSource: number;
let other: Tenancy;

interface Listed {
  id: string;
  type: string;
  status: string;
  clickId: string | null;
  externalId: string | null;
  trafficSourceId: number | null;
  names: Record<string, string | null>;
}

beforeAll(async () => {
  t = await startTestApp();
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  otherSource = await createVia(t, who, "traffic-sources", { name: "Meta Ads" });
  other = await seedTenancy(t);
  const viaFirst = await clickThrough(t, cat);
  const viaSecond = await clickThrough(t, { ...cat, trafficSourceId: otherSource });
  const items = [
    { type: "Signup", clickId: viaFirst, externalId: "su-1" },
    { type: "FirstTimeDeposit", clickId: viaFirst, externalId: "ftd-1", value: 50, currency: "EUR" },
    { type: "Signup", clickId: viaSecond, externalId: "su-2", status: "rejected" },
    { type: "Deposit", externalId: "dep-3", value: 10, currency: "EUR" },
  ];
  const res = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: who.apiKey },
    payload: { items },
  });
  expect(res.statusCode, res.body).toBe(201);
});
afterAll(async () => t.close());

async function list(query: string, as = who.bearer): Promise<{ status: number; items: Listed[]; body: string }> {
  const res = await t.call({ method: "GET", url: `/api/v1/conversions?${query}`, headers: { authorization: as } });
  return { status: res.statusCode, items: res.statusCode === 200 ? res.json().data : [], body: res.body };
}

describe("GET /api/v1/conversions", () => {
  it("answers each item's catalog names, read in the same statement", async () => {
    const { items } = await list("externalId=ftd-1");
    expect(items).toHaveLength(1);
    expect(items[0]?.names).toEqual({
      account: "Account",
      brand: "Brand",
      program: "Program",
      link: "Link",
      trafficSource: "Source",
      tracker: null,
    });
    const unattributed = await list("externalId=dep-3");
    expect(unattributed.items[0]?.names.link).toBeNull();
  });

  it("answers no names to a person who may not read the catalog", async () => {
    const email = `conversions-only-${Date.now()}@example.com`;
    const password = "correct horse battery";
    await createUser(
      t.ctx.db,
      who.tenantId,
      { email, password, name: "Conversions only", permissions: ["conversions.read"] },
      { type: "system", name: "test" },
      t.clock.now(),
    );
    const login = await t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });
    const { status, items } = await list("", `Bearer ${login.json().data.token}`);
    expect(status).toBe(200);
    expect(items).toHaveLength(4);
    for (const item of items) expect(Object.values(item.names).every((n) => n === null)).toBe(true);
  });

  it("searches by exact click id and externalId", async () => {
    const ftd = (await list("externalId=ftd-1")).items[0];
    const byClick = await list(`clickId=${ftd?.clickId}`);
    expect(byClick.items.map((i) => i.externalId).sort()).toEqual(["ftd-1", "su-1"]);
    expect((await list("externalId=ftd")).items).toHaveLength(0);
    expect((await list("externalId=ftd-1", other.bearer)).items).toHaveLength(0);
  });

  it("filters by comma lists of types (any case), statuses and traffic sources", async () => {
    const types = await list("type=signup,FIRSTTIMEDEPOSIT");
    expect(types.items.map((i) => i.externalId).sort()).toEqual(["ftd-1", "su-1", "su-2"]);
    const single = await list("type=Deposit");
    expect(single.items.map((i) => i.externalId)).toEqual(["dep-3"]);
    const sources = await list(`trafficSourceId=${otherSource}`);
    expect(sources.items.map((i) => i.externalId)).toEqual(["su-2"]);
    const both = await list(`trafficSourceId=${cat.trafficSourceId},${otherSource}&status=rejected&type=Signup`);
    expect(both.items.map((i) => i.externalId)).toEqual(["su-2"]);
  });

  it("refuses a bad list with a 400 naming its parameter", async () => {
    for (const [query, field] of [
      ["type=Signup,Lead", "type"],
      ["trafficSourceId=3,x", "trafficSourceId"],
      ["trafficSourceId=0", "trafficSourceId"],
      [`trafficSourceId=${Array.from({ length: 51 }, (_, i) => i + 1).join(",")}`, "trafficSourceId"],
      [`externalId=${"x".repeat(201)}`, "externalId"],
      ["status=done", "status"],
    ] as const) {
      const res = await list(query);
      expect(res.status, query).toBe(400);
      expect(res.body, query).toContain(field);
    }
  });
});
