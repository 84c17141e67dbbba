/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: postback URL templates use the ${name} placeholder syntax */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { TestApp } from "./helpers/app.js";
import { clickOn, getPostbacks, patchSource, resendPostback, startPostbackApp } from "./helpers/source-postbacks.js";
import { seedTenantWithCatalog, signInPerson, type TenantWithCatalog } from "./helpers/webhooks.js";

// The settings of traffic-source postbacks on the traffic source (docs/traffic-source-postbacks.md):
// what PATCH takes and GET answers, the refusals (400 naming the field or placeholder), the
// save-time host check, the click-id parameter on the click path, and the scopes of the routes.

let t: TestApp;
let tenant: TenantWithCatalog;

beforeAll(async () => {
  ({ t } = await startPostbackApp());
  tenant = await seedTenantWithCatalog(t);
});
afterAll(() => t.close());

const URL_OK = "https://network.example/pb?sub=${externalId}&payout={{payout}}&c=${conversionId}";

async function sourceClickIdOf(clickId: string): Promise<string | null | undefined> {
  // The click is written when the buffer flushes; a flush here stands in for the timer.
  await t.ctx.tracking.clicks.flush();
  const [row] = await t.ctx.db.query<{ source_click_id: string | null }>(
    "select source_click_id from clicks where id = $1",
    [clickId],
  );
  return row?.source_click_id;
}

describe("the settings on the traffic source", () => {
  it("takes clickIdParam and postback, fills the postback's defaults, answers them on GET and clears them with null", async () => {
    const { who, cat } = tenant;
    const before = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${cat.trafficSourceId}`,
      headers: { authorization: who.apiKey },
    });
    expect(before.json().data).toMatchObject({ clickIdParam: null, postback: null });

    const res = await patchSource(t, who, cat.trafficSourceId, { clickIdParam: "clickid", postback: { url: URL_OK } });
    expect(res.statusCode, res.body).toBe(200);
    const expected = { url: URL_OK, conversionTypes: [], payoutShare: null, enabled: true, statusChanges: false };
    expect(res.json().data).toMatchObject({ clickIdParam: "clickid", postback: expected });
    const got = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${cat.trafficSourceId}`,
      headers: { authorization: who.apiKey },
    });
    expect(got.json().data).toMatchObject({ clickIdParam: "clickid", postback: expected });
    const listed = await t.call({
      method: "GET",
      url: "/api/v1/traffic-sources",
      headers: { authorization: who.apiKey },
    });
    expect(listed.json().data.find((s: { id: number }) => s.id === cat.trafficSourceId)).toMatchObject({
      clickIdParam: "clickid",
      postback: expected,
    });

    // A full postback, then only the name changed: the postback stays.
    const full = { url: URL_OK, conversionTypes: ["Deposit"], payoutShare: 12.5, enabled: false, statusChanges: true };
    expect((await patchSource(t, who, cat.trafficSourceId, { postback: full })).json().data.postback).toEqual(full);
    const renamed = await patchSource(t, who, cat.trafficSourceId, { name: "Renamed source" });
    expect(renamed.json().data).toMatchObject({ name: "Renamed source", clickIdParam: "clickid", postback: full });

    const cleared = await patchSource(t, who, cat.trafficSourceId, { clickIdParam: null, postback: null });
    expect(cleared.statusCode, cleared.body).toBe(200);
    expect(cleared.json().data).toMatchObject({ clickIdParam: null, postback: null });

    // Creating a source may set them too.
    const created = await t.call({
      method: "POST",
      url: "/api/v1/traffic-sources",
      headers: { authorization: who.apiKey },
      payload: { name: "With postback", clickIdParam: "zoneid", postback: { url: URL_OK, payoutShare: 30 } },
    });
    expect(created.statusCode, created.body).toBe(201);
    expect(created.json().data).toMatchObject({ clickIdParam: "zoneid", postback: { payoutShare: 30, enabled: true } });
  });

  it.each([
    ["an unknown placeholder", { postback: { url: "https://n.example/?s=${nope}" } }, "postback.url", "${nope}"],
    [
      "a dotted placeholder",
      { postback: { url: "https://n.example/?s={{click.id}}" } },
      "postback.url",
      "{{click.id}}",
    ],
    [
      "a raw placeholder in the host",
      { postback: { url: "https://{{{externalId}}}.example/" } },
      "postback.url",
      "{{{externalId}}}",
    ],
    [
      "a simulate-only placeholder",
      { postback: { url: "https://n.example/?c=${campaign}" } },
      "postback.url",
      "${campaign}",
    ],
    ["a relative URL", { postback: { url: "/pb?s=${externalId}" } }, "postback.url", "absolute"],
    [
      "a commission type",
      { postback: { url: URL_OK, conversionTypes: ["CpaCommission"] } },
      "postback.conversionTypes",
      "CpaCommission",
    ],
    ["Click as a type", { postback: { url: URL_OK, conversionTypes: ["Click"] } }, "postback.conversionTypes", "Click"],
    ["an unknown type", { postback: { url: URL_OK, conversionTypes: ["Sale"] } }, "conversionTypes", "Sale"],
    ["a share over 100", { postback: { url: URL_OK, payoutShare: 150 } }, "payoutShare", "100"],
    ["a negative share", { postback: { url: URL_OK, payoutShare: -1 } }, "payoutShare", "0"],
    ["no url", { postback: { payoutShare: 10 } }, "url", "url"],
    ["an unknown postback field", { postback: { url: URL_OK, method: "POST" } }, "method", "method"],
    ["a click parameter with a space", { clickIdParam: "click id" }, "clickIdParam", "clickIdParam"],
    ["a prototype key as click parameter", { clickIdParam: "__proto__" }, "clickIdParam", "clickIdParam"],
    ["an empty click parameter", { clickIdParam: "" }, "clickIdParam", "clickIdParam"],
  ])("refuses %s with a 400 naming it", async (_what, payload, field, named) => {
    const res = await patchSource(t, tenant.who, tenant.cat.trafficSourceId, payload);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().code).toBe("validation_error");
    expect(res.json().message).toContain(named);
    expect(JSON.stringify(res.json().data.errors)).toContain(field);
  });

  it("refuses a loopback or private host unless WEBHOOK_ALLOWED_HOSTS allows it", async () => {
    // This app allows 127.0.0.1 (the tests' receiver); another address of the range is refused.
    for (const url of ["http://127.0.0.2:9/pb?s=${externalId}", "http://10.1.2.3/pb", "http://[::1]/pb"]) {
      const res = await patchSource(t, tenant.who, tenant.cat.trafficSourceId, { postback: { url } });
      expect(res.statusCode, `${url}: ${res.body}`).toBe(400);
      expect(res.json().message).toContain("WEBHOOK_ALLOWED_HOSTS");
      expect(res.json().data.errors[0].path).toBe("postback.url");
    }
    const allowed = await patchSource(t, tenant.who, tenant.cat.trafficSourceId, {
      postback: { url: "http://127.0.0.1:9/pb?s=${externalId}" },
    });
    expect(allowed.statusCode, allowed.body).toBe(200);
  });
});

describe("the click-id parameter on the click path", () => {
  it("stores the parameter's value with the click once set, and nothing without it", async () => {
    const { who, cat } = tenant;
    await patchSource(t, who, cat.trafficSourceId, { clickIdParam: null });
    const before = await clickOn(t, cat, cat.trafficSourceId, "?zoneid=z-0");
    expect(await sourceClickIdOf(before)).toBeNull();

    // The change reaches the click path's cache at once.
    expect((await patchSource(t, who, cat.trafficSourceId, { clickIdParam: "zoneid" })).statusCode).toBe(200);
    expect(await sourceClickIdOf(await clickOn(t, cat, cat.trafficSourceId, "?zoneid=z-1&pa=a"))).toBe("z-1");
    // The first of a repeated parameter, as for the other click parameters; the name is case-sensitive.
    expect(await sourceClickIdOf(await clickOn(t, cat, cat.trafficSourceId, "?zoneid=z-2&zoneid=z-3"))).toBe("z-2");
    expect(await sourceClickIdOf(await clickOn(t, cat, cat.trafficSourceId, "?ZONEID=z-4"))).toBeNull();
    // Bounded like the other click parameters.
    const long = await clickOn(t, cat, cat.trafficSourceId, `?zoneid=${"x".repeat(2000)}`);
    expect((await sourceClickIdOf(long))?.length).toBe(500);

    // A parameter named like an object's own property reads only the query's own key.
    await patchSource(t, who, cat.trafficSourceId, { clickIdParam: "constructor" });
    expect(await sourceClickIdOf(await clickOn(t, cat, cat.trafficSourceId))).toBeNull();
    expect(await sourceClickIdOf(await clickOn(t, cat, cat.trafficSourceId, "?constructor=k-1"))).toBe("k-1");
    await patchSource(t, who, cat.trafficSourceId, { clickIdParam: null });
  });
});

describe("scopes", () => {
  // The postback sends conversion data to a host the caller chooses, as a webhook does: the
  // catalog's rights alone neither set it, nor read its URL (the network's token), nor resend.
  const sourceUrl = () => `/api/v1/traffic-sources/${tenant.cat.trafficSourceId}`;

  it("reads postbacks with webhooks.read and resends with webhooks.update; catalog rights alone do neither", async () => {
    const { who, cat } = tenant;
    const catalogReader = await signInPerson(t, who.tenantId, { name: "Reader", permissions: ["catalog.read"] });
    const catalogWriter = await signInPerson(t, who.tenantId, { name: "Writer", permissions: ["catalog.update"] });
    const hookReader = await signInPerson(t, who.tenantId, { name: "Hook reader", permissions: ["webhooks.read"] });
    const hookWriter = await signInPerson(t, who.tenantId, { name: "Hook writer", permissions: ["webhooks.update"] });
    const outsider = await signInPerson(t, who.tenantId, { name: "Outsider", permissions: ["reports.read"] });
    expect((await getPostbacks(t, hookReader.bearer, cat.trafficSourceId)).statusCode).toBe(200);
    for (const caller of [catalogReader, catalogWriter, outsider]) {
      const refused = await getPostbacks(t, caller.bearer, cat.trafficSourceId);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().message).toBe("Missing permission 'webhooks.read'");
    }
    const attempts = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${cat.trafficSourceId}/postbacks/tsp_x/attempts`,
      headers: { authorization: hookReader.bearer },
    });
    expect(attempts.statusCode).toBe(404);
    // 403 before any lookup, whatever the postback's status; with the right, the unknown postback is a 404.
    for (const caller of [catalogWriter, hookReader]) {
      const refused = await resendPostback(t, caller.bearer, cat.trafficSourceId, "tsp_x");
      expect(refused.statusCode).toBe(403);
      expect(refused.json().message).toBe("Missing permission 'webhooks.update'");
    }
    expect((await resendPostback(t, hookWriter.bearer, cat.trafficSourceId, "tsp_x")).statusCode).toBe(404);
    expect((await getPostbacks(t, hookReader.bearer, 999_999_999)).statusCode).toBe(404);
  });

  it("sets or removes a postback only with webhooks.update, on create and on change", async () => {
    const { who, cat } = tenant;
    const catalogWriter = await signInPerson(t, who.tenantId, {
      name: "Catalog writer",
      permissions: ["catalog.read", "catalog.update"],
    });
    const both = await signInPerson(t, who.tenantId, {
      name: "Postback writer",
      permissions: ["catalog.update", "webhooks.update"],
    });
    for (const postback of [{ url: "https://evil.example/pb?c=${conversionId}&v=${value}" }, null]) {
      const patch = await patchSource(t, catalogWriter.bearer, cat.trafficSourceId, { postback });
      expect(patch.statusCode, patch.body).toBe(403);
      expect(patch.json().message).toBe("Missing permission 'webhooks.update'");
    }
    const create = await t.call({
      method: "POST",
      url: "/api/v1/traffic-sources",
      headers: { authorization: catalogWriter.bearer },
      payload: { name: "Exfiltration", postback: { url: "https://evil.example/pb?c=${conversionId}" } },
    });
    expect(create.statusCode, create.body).toBe(403);
    const names = await t.ctx.db.query("select 1 from traffic_sources where name = 'Exfiltration'");
    expect(names).toHaveLength(0);
    // The rest of the source stays the catalog's: a rename needs no webhook right.
    expect((await patchSource(t, catalogWriter.bearer, cat.trafficSourceId, { name: "Renamed" })).statusCode).toBe(200);

    const set = await patchSource(t, both.bearer, cat.trafficSourceId, { postback: { url: URL_OK, enabled: false } });
    expect(set.statusCode, set.body).toBe(200);
    // webhooks.update without webhooks.read: saved, but the answer does not show it back.
    expect(set.json().data).not.toHaveProperty("postback");
    const [row] = await t.ctx.db.query<{ postback: { url: string } }>(
      "select postback from traffic_sources where id = $1",
      [cat.trafficSourceId],
    );
    expect(row?.postback.url).toBe(URL_OK);
    await patchSource(t, who, cat.trafficSourceId, { postback: null });
  });

  it("shows the postback (its URL carries the network's token) only to a caller with webhooks.read", async () => {
    const { who, cat } = tenant;
    await patchSource(t, who, cat.trafficSourceId, { postback: { url: URL_OK, enabled: false } });
    const catalogOnly = await signInPerson(t, who.tenantId, { name: "Catalog only", permissions: ["catalog.read"] });
    const reader = await signInPerson(t, who.tenantId, {
      name: "Catalog and hooks",
      permissions: ["catalog.read", "webhooks.read"],
    });
    const read = (caller: { bearer: string }, url: string) =>
      t.call({ method: "GET", url, headers: { authorization: caller.bearer } });
    const one = await read(catalogOnly, sourceUrl());
    expect(one.statusCode).toBe(200);
    expect(one.json().data).toMatchObject({ id: cat.trafficSourceId, clickIdParam: null });
    expect(one.json().data).not.toHaveProperty("postback");
    expect(one.body).not.toContain("network.example");
    const list = await read(catalogOnly, "/api/v1/traffic-sources");
    expect(list.statusCode).toBe(200);
    expect(list.body).not.toContain("network.example");
    for (const item of list.json().data) expect(item).not.toHaveProperty("postback");
    expect((await read(reader, sourceUrl())).json().data.postback).toMatchObject({ url: URL_OK, enabled: false });
    await patchSource(t, who, cat.trafficSourceId, { postback: null });
  });
});
