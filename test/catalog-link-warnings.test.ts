import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";

// A brand link without {clickId} saves, but its answers carry a warning on `url`.
let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;

beforeAll(async () => {
  t = await startTestApp();
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
});
afterAll(async () => t.close());

const call = (method: "GET" | "POST" | "PATCH", url: string, payload?: object) =>
  t.call({ method, url: `/api/v1/${url}`, headers: { authorization: who.apiKey }, ...(payload ? { payload } : {}) });

const NO_CLICK_ID = [{ field: "url", message: expect.stringMatching(/no \{clickId\}.*cannot be tied to clicks/) }];

describe("brand link warnings", () => {
  it("warns on create, get, list and update while the URL has no {clickId}, and not once it has", async () => {
    const created = await call("POST", "links", {
      name: "No click id",
      accountId: cat.accountId,
      brandId: cat.brandId,
      url: "https://brand.example/landing?ref=1",
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id;
    expect(created.json().data.warnings).toEqual(NO_CLICK_ID);
    expect((await call("GET", `links/${id}`)).json().data.warnings).toEqual(NO_CLICK_ID);
    const listed = (await call("GET", "links")).json().data as { id: number; warnings: unknown }[];
    expect(listed.find((l) => l.id === id)?.warnings).toEqual(NO_CLICK_ID);
    expect(listed.find((l) => l.id === cat.linkId)?.warnings).toEqual([]);

    const fixed = await call("PATCH", `links/${id}`, { url: "https://brand.example/landing?ref=1&btag={clickId}" });
    expect(fixed.statusCode, fixed.body).toBe(200);
    expect(fixed.json().data.warnings).toEqual([]);
    const broken = await call("PATCH", `links/${id}`, { url: "https://brand.example/landing?btag={click}" });
    expect(broken.json().data.warnings).toEqual(NO_CLICK_ID);
  });
});
