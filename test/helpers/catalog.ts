import type { Tenancy, TestApp } from "./app.js";

export interface CatalogFixture {
  brandId: number;
  programId: number;
  accountId: number;
  linkId: number;
  trafficSourceId: number;
}

/** Creates one catalog row through the API and returns its id (throws with the answer otherwise). */
export async function createVia(
  t: TestApp,
  who: Tenancy,
  path: string,
  payload: Record<string, unknown>,
): Promise<number> {
  const res = await t.call({ method: "POST", url: `/api/v1/${path}`, headers: { authorization: who.apiKey }, payload });
  if (res.statusCode !== 201) throw new Error(`POST /api/v1/${path} answered ${res.statusCode}: ${res.body}`);
  return res.json().data.id as number;
}

/** A brand, a program offering it, an account at the program, a link and a traffic source. */
export async function seedCatalog(
  t: TestApp,
  who: Tenancy,
  url = "https://brand.example/landing?cid={clickId}",
): Promise<CatalogFixture> {
  const brandId = await createVia(t, who, "brands", { name: "Brand" });
  const programId = await createVia(t, who, "programs", { name: "Program", brandIds: [brandId] });
  const accountId = await createVia(t, who, "accounts", { name: "Account", programId, username: "aff1" });
  const linkId = await createVia(t, who, "links", { name: "Link", accountId, brandId, url });
  const trafficSourceId = await createVia(t, who, "traffic-sources", { name: "Source" });
  return { brandId, programId, accountId, linkId, trafficSourceId };
}
