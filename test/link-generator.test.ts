import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia, seedCatalog } from "./helpers/catalog.js";

// Upper case in the base on purpose: the whole generated link comes back lower-cased.
const BASE = "https://Track.Example.COM";

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let other: Tenancy;
let otherCat: CatalogFixture;
let trackerId: number;
let otherTrackerId: number;

beforeAll(async () => {
  t = await startTestApp({ env: { PUBLIC_BASE_URL: BASE } });
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  other = await seedTenancy(t);
  otherCat = await seedCatalog(t, other);
  trackerId = await createVia(t, who, "trackers", { name: "Summer Promo" });
  otherTrackerId = await createVia(t, other, "trackers", { name: "Their Promo" });
});
afterAll(async () => t.close());

function generate(
  linkId: number | string,
  sourceId: number | string,
  tracker?: string,
  authorization: string | null = who.apiKey,
) {
  const query = tracker === undefined ? "" : `?${new URLSearchParams({ tracker }).toString()}`;
  return t.call({
    method: "GET",
    url: `/api/v1/link-generator/router/brand-link/${linkId}/traffic-source/${sourceId}/url${query}`,
    headers: authorization === null ? {} : { authorization },
  });
}

const base = () => `${BASE.toLowerCase()}/go/${cat.linkId}/${cat.trafficSourceId}`;

async function trackerRows(tenant: Tenancy): Promise<{ id: number; name: string }[]> {
  const rows = await t.testDb.db.query<{ id: string; name: string }>(
    "select id, name from trackers where tenant_id = $1 order by id",
    [tenant.tenantId],
  );
  return rows.map((r) => ({ id: Number(r.id), name: r.name }));
}

/** Follows a generated url as a visitor would; answers the stored click. */
async function follow(url: string): Promise<{ location: string; trackerId: number | null; linkId: number }> {
  const parsed = new URL(url);
  expect(parsed.origin).toBe(BASE.toLowerCase());
  const res = await t.call({
    method: "GET",
    url: `${parsed.pathname}${parsed.search}`,
    headers: { "user-agent": "Mozilla/5.0 (Macintosh) Safari/605.1.15" },
  });
  expect(res.statusCode, res.body).toBe(302);
  const location = String(res.headers.location);
  const clickId = new URL(location).searchParams.get("cid");
  await t.ctx.tracking.clicks.flush();
  const [row] = await t.testDb.db.query<{ tracker_id: string | null; link_id: string }>(
    "select tracker_id, link_id from clicks where id = $1",
    [clickId],
  );
  if (!row) throw new Error(`click ${clickId} was not stored`);
  return {
    location,
    trackerId: row.tracker_id === null ? null : Number(row.tracker_id),
    linkId: Number(row.link_id),
  };
}

function expectRefused(res: Awaited<ReturnType<typeof generate>>, reason: RegExp) {
  expect(res.statusCode, res.body).toBe(400);
  const body = res.json();
  expect(body.code).toBe("validation_error");
  expect(body.message).toMatch(/tracker/);
  expect(body.message).toMatch(reason);
}

describe("GET /api/v1/link-generator/router/brand-link/{id}/traffic-source/{id}/url", () => {
  it("adds the source's <clickIdParam>=<clickIdMacro> as written, and a follow stores the source's click id", async () => {
    const sourceId = await createVia(t, who, "traffic-sources", {
      name: "Macro Net",
      clickIdParam: "zoneClick",
      clickIdMacro: "{ClickID}",
    });
    const res = await generate(cat.linkId, sourceId, String(trackerId));
    expect(res.statusCode, res.body).toBe(200);
    const prefix = `${BASE.toLowerCase()}/go/${cat.linkId}/${sourceId}`;
    expect(res.json().data).toMatchObject({ url: `${prefix}?tracker=${trackerId}&zoneClick={ClickID}`, warnings: [] });
    const bare = await generate(cat.linkId, sourceId);
    expect(bare.json().data.url).toBe(`${prefix}?zoneClick={ClickID}`);
    // The network fills its macro; the click keeps the value under the exact parameter name.
    await follow(`${prefix}?zoneClick=net-123`);
    const [row] = await t.testDb.db.query<{ source_click_id: string | null }>(
      "select source_click_id from clicks where tenant_id = $1 and traffic_source_id = $2",
      [who.tenantId, sourceId],
    );
    expect(row?.source_click_id).toBe("net-123");
  });

  it("warns when the source has a clickIdParam but no clickIdMacro, and not when it has neither", async () => {
    const sourceId = await createVia(t, who, "traffic-sources", { name: "No Macro Net", clickIdParam: "cid" });
    const res = await generate(cat.linkId, sourceId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.url).toBe(`${BASE.toLowerCase()}/go/${cat.linkId}/${sourceId}`);
    expect(res.json().data.warnings).toEqual([
      { field: "clickIdMacro", message: expect.stringMatching(/cid=.*postback cannot carry/) },
    ]);
    expect((await generate(cat.linkId, cat.trafficSourceId)).json().data.warnings).toEqual([]);
  });

  it("refuses a bad clickIdMacro with a 400 naming the field, and clears it with null", async () => {
    for (const clickIdMacro of ["", "a b", "{x}&y", "a=b", "#x", "x".repeat(101)]) {
      const res = await t.call({
        method: "POST",
        url: "/api/v1/traffic-sources",
        headers: { authorization: who.apiKey },
        payload: { name: `Bad ${clickIdMacro.length}`, clickIdParam: "cid", clickIdMacro },
      });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.body).toMatch(/clickIdMacro/);
    }
    const id = await createVia(t, who, "traffic-sources", { name: "Clear Me", clickIdMacro: "[CID]" });
    const cleared = await t.call({
      method: "PATCH",
      url: `/api/v1/traffic-sources/${id}`,
      headers: { authorization: who.apiKey },
      payload: { clickIdMacro: null },
    });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().data.clickIdMacro).toBeNull();
  });

  it("answers the lower-cased /go url of the link and source without a tracker", async () => {
    const res = await generate(cat.linkId, cat.trafficSourceId);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json()).toMatchObject({ code: "ok", data: { url: base(), tracker: null } });
    const click = await follow(res.json().data.url);
    expect(click.linkId).toBe(cat.linkId);
    expect(click.trackerId).toBeNull();
    expect(click.location).toMatch(/^https:\/\/brand\.example\/landing\?cid=clk_/);
  });

  it("accepts an existing tracker id", async () => {
    const res = await generate(cat.linkId, cat.trafficSourceId, String(trackerId));
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({
      url: `${base()}?tracker=${trackerId}`,
      tracker: { id: trackerId, name: "Summer Promo", isNew: false },
      warnings: [],
    });
    expect((await follow(res.json().data.url)).trackerId).toBe(trackerId);
  });

  it("refuses a tracker id that does not exist or belongs to another tenant, with the reason", async () => {
    expectRefused(await generate(cat.linkId, cat.trafficSourceId, "987654321"), /987654321 does not exist/);
    expectRefused(
      await generate(cat.linkId, cat.trafficSourceId, String(otherTrackerId)),
      new RegExp(`${otherTrackerId} does not exist`),
    );
    expectRefused(await generate(cat.linkId, cat.trafficSourceId, "0"), /does not exist/);
    const refused = await generate(cat.linkId, cat.trafficSourceId, "987654321");
    expect(refused.json().data.errors).toEqual([{ path: "tracker", message: expect.stringMatching(/does not exist/) }]);
    // The other tenant may use its own.
    const theirs = await generate(otherCat.linkId, otherCat.trafficSourceId, String(otherTrackerId), other.apiKey);
    expect(theirs.statusCode, theirs.body).toBe(200);
  });

  it("swaps a known name, in any case, for its id", async () => {
    for (const name of ["Summer Promo", "summer promo", "SUMMER PROMO", "sUmMeR pRoMo"]) {
      const res = await generate(cat.linkId, cat.trafficSourceId, name);
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({
        url: `${base()}?tracker=${trackerId}`,
        tracker: { id: trackerId, name: "Summer Promo", isNew: false },
        warnings: [],
      });
    }
  });

  it("does not swap another tenant's tracker name: it is new here", async () => {
    const res = await generate(cat.linkId, cat.trafficSourceId, "Their Promo");
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.tracker).toEqual({ id: null, name: "their promo", isNew: true });
  });

  it("keeps a new name as a name; following the link creates the tracker, then the name is swapped", async () => {
    const before = await trackerRows(who);
    const res = await generate(cat.linkId, cat.trafficSourceId, "Autumn Launch");
    expect(res.statusCode, res.body).toBe(200);
    const { url, tracker } = res.json().data;
    expect(url).toBe(`${base()}?tracker=autumn%20launch`);
    // The name as the first click will store it: lower-cased, as the URL has it.
    expect(tracker).toEqual({ id: null, name: "autumn launch", isNew: true });
    // Generating it creates nothing yet.
    expect(await trackerRows(who)).toEqual(before);

    const click = await follow(url);
    const after = await trackerRows(who);
    const created = after.filter((tr) => !before.some((b) => b.id === tr.id));
    expect(created).toEqual([{ id: expect.any(Number), name: "autumn launch" }]);
    expect(click.trackerId).toBe(created[0]?.id);

    // Following it again, or a differently cased link, creates nothing more.
    expect((await follow(url)).trackerId).toBe(created[0]?.id);
    const again = await generate(cat.linkId, cat.trafficSourceId, "AUTUMN LAUNCH");
    expect(again.json().data).toEqual({
      url: `${base()}?tracker=${created[0]?.id}`,
      tracker: { id: created[0]?.id, name: "autumn launch", isNew: false },
      warnings: [],
    });
    expect((await follow(again.json().data.url)).trackerId).toBe(created[0]?.id);
    expect(await trackerRows(who)).toEqual(after);
  });

  it("encodes a new name so that following the link gives back the same name", async () => {
    const res = await generate(cat.linkId, cat.trafficSourceId, "A&B=C?D/E#F+G");
    expect(res.statusCode, res.body).toBe(200);
    const url: string = res.json().data.url;
    expect(url).toBe(url.toLowerCase());
    const click = await follow(url);
    const [row] = (await trackerRows(who)).filter((tr) => tr.id === click.trackerId);
    expect(row?.name).toBe("a&b=c?d/e#f+g");
  });

  it("accepts names of 4 and 50 characters and refuses 3 and 51, with the reason", async () => {
    for (const name of ["abcd", "x".repeat(50)]) {
      const res = await generate(cat.linkId, cat.trafficSourceId, name);
      expect(res.statusCode, name).toBe(200);
      expect(res.json().data.tracker).toEqual({ id: null, name, isNew: true });
    }
    expectRefused(await generate(cat.linkId, cat.trafficSourceId, "abc"), /4 to 50 characters \(it has 3\)/);
    expectRefused(await generate(cat.linkId, cat.trafficSourceId, "y".repeat(51)), /4 to 50 characters \(it has 51\)/);
  });

  it("answers 404 for an unknown link or source, or another tenant's", async () => {
    const cases: [number, number, RegExp][] = [
      [cat.linkId + 10_000, cat.trafficSourceId, /Brand link/],
      [cat.linkId, cat.trafficSourceId + 10_000, /Traffic source/],
      [otherCat.linkId, cat.trafficSourceId, /Brand link/],
      [cat.linkId, otherCat.trafficSourceId, /Traffic source/],
      [otherCat.linkId, otherCat.trafficSourceId, /Brand link/],
    ];
    for (const [linkId, sourceId, what] of cases) {
      const res = await generate(linkId, sourceId, String(trackerId));
      expect(res.statusCode, `${linkId}/${sourceId}`).toBe(404);
      expect(res.json().code).toBe("not_found");
      expect(res.json().message).toMatch(what);
    }
  });

  it("answers 400 for ids that are not positive integers", async () => {
    for (const [linkId, sourceId] of [
      ["abc", cat.trafficSourceId],
      [cat.linkId, "0"],
    ] as const) {
      const res = await generate(linkId, sourceId);
      expect(res.statusCode, `${linkId}/${sourceId}`).toBe(400);
      expect(res.json().code).toBe("validation_error");
    }
  });

  it("answers 401 without a credential and 403 without catalog.read, before any lookup", async () => {
    const anonymous = await generate(cat.linkId, cat.trafficSourceId, undefined, null);
    expect(anonymous.statusCode).toBe(401);
    expect(anonymous.json().code).toBe("unauthorized");

    const reader = await seedTenancy(t, { permissions: ["reports.read"] });
    const own = await seedCatalog(t, reader);
    const denied = await generate(own.linkId, own.trafficSourceId, undefined, reader.bearer);
    expect(denied.statusCode).toBe(403);
    expect(denied.json().code).toBe("forbidden");
    // Not 404 for an id that does not exist, nor 400 for a bad tracker: the permission comes first.
    expect((await generate(own.linkId + 10_000, own.trafficSourceId, "ab", reader.bearer)).statusCode).toBe(403);

    const catalogReader = await seedTenancy(t, { permissions: ["catalog.read"] });
    const theirs = await seedCatalog(t, catalogReader);
    const allowed = await generate(theirs.linkId, theirs.trafficSourceId, undefined, catalogReader.bearer);
    expect(allowed.statusCode, allowed.body).toBe(200);
  });
});
