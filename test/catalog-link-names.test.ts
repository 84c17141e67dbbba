import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

// Brand link names repeat across accounts ("main" in each): the list answers each link's account
// and brand names, and its search finds a link by a part of either (the dashboard's pickers).

interface Link {
  id: number;
  name: string;
  names: { account: string | null; brand: string | null };
}

describe("brand links with their account and brand", () => {
  let t: TestApp;
  let who: Tenancy;
  const ids: Record<string, number> = {};

  beforeAll(async () => {
    t = await startTestApp();
    who = await seedTenancy(t);
    const create = async (path: string, payload: object): Promise<number> => {
      const res = await t.call({
        method: "POST",
        url: `/api/v1/${path}`,
        headers: { authorization: who.apiKey },
        payload,
      });
      if (res.statusCode !== 201) throw new Error(`POST ${path} answered ${res.statusCode}: ${res.body}`);
      return res.json().data.id;
    };
    const nova = await create("brands", { name: "Nova Casino" });
    const star = await create("brands", { name: "Star Bingo" });
    ids.star = star;
    const program = await create("programs", { name: "Nova partners", brandIds: [nova, star] });
    const acme = await create("accounts", { name: "Acme account", programId: program });
    const zen = await create("accounts", { name: "Zen media", programId: program });
    const url = "https://brand.example/?c={clickId}";
    ids.acmeNova = await create("links", { name: "nova-bingo main", accountId: acme, brandId: nova, url });
    ids.zenNova = await create("links", { name: "nova-bingo main", accountId: zen, brandId: nova, url });
    ids.acmeStar = await create("links", { name: "nova-bingo main", accountId: acme, brandId: star, url });
  });
  afterAll(() => t.close());

  const list = async (query: string): Promise<Link[]> => {
    const res = await t.call({ method: "GET", url: `/api/v1/links?${query}`, headers: { authorization: who.apiKey } });
    expect(res.statusCode).toBe(200);
    return res.json().data;
  };

  it("names each link's account and brand in the list, one answer, and in a single link's answer", async () => {
    const links = await list("search=nova-bingo");
    expect(links.map((l) => [l.id, l.names])).toEqual([
      [ids.acmeNova, { account: "Acme account", brand: "Nova Casino" }],
      [ids.zenNova, { account: "Zen media", brand: "Nova Casino" }],
      [ids.acmeStar, { account: "Acme account", brand: "Star Bingo" }],
    ]);
    const one = await t.call({
      method: "GET",
      url: `/api/v1/links/${ids.zenNova}`,
      headers: { authorization: who.apiKey },
    });
    expect(one.json().data.names).toEqual({ account: "Zen media", brand: "Nova Casino" });
  });

  it("answers the names after a change, read in the same statement as the changed row", async () => {
    const res = await t.call({
      method: "PATCH",
      url: `/api/v1/links/${ids.acmeStar}`,
      headers: { authorization: who.apiKey },
      payload: { name: "star main" },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toMatchObject({
      name: "star main",
      names: { account: "Acme account", brand: "Star Bingo" },
    });
  });

  it.each([
    ["ZEN", ["zenNova"]],
    ["star bingo", ["acmeStar"]],
    ["acme", ["acmeNova", "acmeStar"]],
    ["nova", ["acmeNova", "zenNova"]],
    ["casino", ["acmeNova", "zenNova"]],
    ["no such", []],
  ])("search=%j matches the link's, its account's or its brand's name", async (search, expected) => {
    const links = await list(`search=${encodeURIComponent(search)}`);
    expect(links.map((l) => l.id)).toEqual(expected.map((key) => ids[key]));
  });

  it("keeps search and filters together, and another tenant's names out", async () => {
    const other = await seedTenancy(t);
    const res = await t.call({
      method: "GET",
      url: "/api/v1/links?search=acme",
      headers: { authorization: other.apiKey },
    });
    expect(res.json()).toMatchObject({ data: [], pagination: { total: 0 } });
    const byBrand = await list(`search=acme&brandId=${ids.star}`);
    expect(byBrand.map((l) => l.id)).toEqual([ids.acmeStar]);
  });
});
