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

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36";

/** Makes a click through /go with a browser user agent and returns its id, read from the redirect. */
export async function clickThrough(t: TestApp, fixture: CatalogFixture, query = ""): Promise<string> {
  const res = await t.call({
    method: "GET",
    url: `/go/${fixture.linkId}/${fixture.trafficSourceId}${query}`,
    headers: { "user-agent": BROWSER },
  });
  if (res.statusCode !== 302) throw new Error(`GET /go answered ${res.statusCode}: ${res.body}`);
  const clickId = new URL(String(res.headers.location)).searchParams.get("cid");
  if (!clickId?.startsWith("clk_")) throw new Error(`no click id in ${String(res.headers.location)}`);
  return clickId;
}
