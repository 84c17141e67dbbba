/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { RECORD_KEYS, settingsApi, URL_OK, type WebhookRecord } from "./helpers/webhook-settings.js";
import { setClickWebhooks } from "./helpers/webhooks.js";

// Outgoing webhook settings: create, read, list, change and delete, and what a webhook is for (types, event names, attribution, traffic source). Saved URLs: webhook-settings-urls.test.ts; limits and security: webhook-settings-limits.test.ts.
describe("outgoing webhook settings", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 100_000 } } });
  });
  afterAll(() => t.close());

  const { tenant, source, post, get, patch, remove, list, create, countRows } = settingsApi(() => t);

  describe("create and get", () => {
    let who: Tenancy;
    beforeEach(async () => {
      who = await tenant();
    });

    it("answers 201 with the whole record and the defaults (affiliate-level, no filters, Enabled)", async () => {
      const res = await post(who, { name: "Affiliate receiver", url: URL_OK, method: "GET" });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(body.code).toBe("ok");
      expect(Object.keys(body.data).sort()).toEqual(RECORD_KEYS);
      const now = t.clock.now().toISOString();
      expect(body.data).toEqual({
        id: expect.stringMatching(/^wh_[A-Za-z0-9]+$/),
        name: "Affiliate receiver",
        url: URL_OK,
        method: "GET",
        trafficSourceId: null,
        conversionTypes: [],
        eventNames: {},
        attributionSources: [],
        statusChanges: false,
        status: "Enabled",
        statusReason: null,
        createdAt: now,
        updatedAt: now,
      });
      const again = await get(who, body.data.id);
      expect(again.statusCode).toBe(200);
      expect(again.json().data).toEqual(body.data);
    });

    it("stores every field given, and trafficSourceId null is affiliate-level", async () => {
      const sourceId = await source(who);
      const full = {
        name: "Full receiver",
        url: "https://receiver.example/post",
        method: "POST",
        trafficSourceId: sourceId,
        conversionTypes: ["Deposit", "Signup"],
        eventNames: { Deposit: "dep", Signup: "reg" },
        attributionSources: ["google", "meta"],
        status: "Disabled",
      };
      const res = await post(who, full);
      expect(res.statusCode).toBe(201);
      expect(res.json().data).toMatchObject({ ...full, statusReason: null });
      expect((await get(who, res.json().data.id)).json().data).toMatchObject(full);

      const explicitNull = await post(who, { name: "Null source", url: URL_OK, method: "GET", trafficSourceId: null });
      expect(explicitNull.statusCode).toBe(201);
      expect(explicitNull.json().data.trafficSourceId).toBeNull();
    });

    it("gives each webhook its own id", async () => {
      const a = await create(who);
      const b = await create(who);
      expect(a.id).not.toBe(b.id);
    });

    it("accepts the three placeholder syntaxes, case-insensitive names and spaces inside braces", async () => {
      const url = "https://receiver.example/?a=${CLICKID}&b={{ eventName }}&c={{{Gclid}}}&d=${brandId}";
      const created = await create(who, { url });
      expect(created.url).toBe(url);
    });

    it("answers 404 for an id that does not exist", async () => {
      const res = await get(who, "wh_doesnotexist");
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("not_found");
    });

    it("refuses a body missing a required field or carrying an unknown one", async () => {
      const missing = await post(who, { name: "No method", url: URL_OK });
      expect(missing.statusCode).toBe(400);
      expect(missing.json().message).toContain("method");
      const unknown = await post(who, { name: "x", url: URL_OK, method: "GET", headers: { a: "b" } });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().message).toContain("headers");
      const blank = await post(who, { name: "   ", url: URL_OK, method: "GET" });
      expect(blank.statusCode).toBe(400);
      expect(blank.json().message).toContain("name");
    });
  });

  describe("list", () => {
    let who: Tenancy;
    let sourceA: number;
    let sourceB: number;
    /** In creation order. */
    const made: WebhookRecord[] = [];

    beforeAll(async () => {
      who = await tenant();
      sourceA = await source(who, "A");
      sourceB = await source(who, "B");
      const specs: [string, object][] = [
        ["Alpha affiliate", {}],
        ["Beta affiliate", { status: "Disabled" }],
        ["Gamma on A", { trafficSourceId: sourceA }],
        ["Delta on A", { trafficSourceId: sourceA, status: "Disabled" }],
        ["Epsilon on B", { trafficSourceId: sourceB }],
      ];
      for (const [name, extra] of specs) {
        t.clock.advance(1000);
        made.push(await create(who, extra, name));
      }
      // Another tenant's webhook must never show up.
      await create(await tenant(), {}, "Alpha elsewhere");
    });

    const ids = (res: { json: () => { data: WebhookRecord[] } }) => res.json().data.map((w) => w.id);

    it("lists the tenant's webhooks oldest first with the default paging", async () => {
      const res = await list(who);
      expect(res.statusCode).toBe(200);
      expect(ids(res)).toEqual(made.map((w) => w.id));
      expect(res.json().pagination).toEqual({ offset: 0, limit: 50, total: 5 });
      expect(res.json().data[0]).toEqual(made[0]);
    });

    it("pages with offset and limit", async () => {
      const res = await list(who, "?offset=1&limit=2");
      expect(ids(res)).toEqual([made[1]?.id, made[2]?.id]);
      expect(res.json().pagination).toEqual({ offset: 1, limit: 2, total: 5 });
      const past = await list(who, "?offset=10");
      expect(past.json().data).toEqual([]);
      expect(past.json().pagination?.total).toBe(5);
      expect((await list(who, "?limit=0")).statusCode).toBe(400);
      expect((await list(who, "?limit=501")).statusCode).toBe(400);
    });

    it("filters by trafficSourceId", async () => {
      const a = await list(who, `?trafficSourceId=${sourceA}`);
      expect(ids(a)).toEqual([made[2]?.id, made[3]?.id]);
      expect(a.json().pagination?.total).toBe(2);
      expect(ids(await list(who, `?trafficSourceId=${sourceB}`))).toEqual([made[4]?.id]);
    });

    it("filters by level", async () => {
      expect(ids(await list(who, "?level=affiliate"))).toEqual([made[0]?.id, made[1]?.id]);
      expect(ids(await list(who, "?level=trafficSource"))).toEqual([made[2]?.id, made[3]?.id, made[4]?.id]);
      expect((await list(who, "?level=everything")).statusCode).toBe(400);
    });

    it("filters by status, Suspended included", async () => {
      expect(ids(await list(who, "?status=Disabled"))).toEqual([made[1]?.id, made[3]?.id]);
      expect(ids(await list(who, "?status=Suspended"))).toEqual([]);
      await t.ctx.db.query("update outgoing_webhooks set status = 'Suspended', status_reason = 'test' where id = $1", [
        made[4]?.id,
      ]);
      try {
        expect(ids(await list(who, "?status=Suspended"))).toEqual([made[4]?.id]);
        expect(ids(await list(who, "?status=Enabled"))).toEqual([made[0]?.id, made[2]?.id]);
      } finally {
        await t.ctx.db.query("update outgoing_webhooks set status = 'Enabled', status_reason = null where id = $1", [
          made[4]?.id,
        ]);
      }
    });

    it("searches names case-insensitively, treating % and _ literally", async () => {
      expect(ids(await list(who, "?search=AFFILIATE"))).toEqual([made[0]?.id, made[1]?.id]);
      expect(ids(await list(who, "?search=on%20a"))).toEqual([made[2]?.id, made[3]?.id]);
      expect(ids(await list(who, "?search=%25"))).toEqual([]);
      expect(ids(await list(who, "?search=_"))).toEqual([]);
    });

    it("combines filters", async () => {
      const res = await list(who, `?trafficSourceId=${sourceA}&status=Enabled&search=gamma`);
      expect(ids(res)).toEqual([made[2]?.id]);
      expect(res.json().pagination?.total).toBe(1);
    });

    it("shows another tenant none of these", async () => {
      const stranger = await tenant();
      const res = await list(stranger);
      expect(res.json().data).toEqual([]);
      expect(res.json().pagination?.total).toBe(0);
      // Filtering on a source of another tenant finds nothing either.
      expect((await list(stranger, `?trafficSourceId=${sourceA}`)).json().data).toEqual([]);
    });
  });

  describe("update", () => {
    let who: Tenancy;
    beforeEach(async () => {
      who = await tenant();
    });

    it("changes only the fields sent, and moves updatedAt", async () => {
      const before = await create(who, { conversionTypes: ["Deposit"], attributionSources: ["direct"] });
      t.clock.advance(60_000);
      const res = await patch(who, before.id, { name: "Renamed" });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({ ...before, name: "Renamed", updatedAt: t.clock.now().toISOString() });
      expect((await get(who, before.id)).json().data).toEqual(res.json().data);

      const more = await patch(who, before.id, {
        method: "POST",
        url: "https://other.example/x?e=${eventName}",
        conversionTypes: [],
        eventNames: { Deposit: "dep" },
        attributionSources: ["google", "outbrain"],
      });
      expect(more.statusCode).toBe(200);
      expect(more.json().data).toMatchObject({
        name: "Renamed",
        method: "POST",
        url: "https://other.example/x?e=${eventName}",
        conversionTypes: [],
        eventNames: { Deposit: "dep" },
        attributionSources: ["google", "outbrain"],
        createdAt: before.createdAt,
      });
    });

    it("moves a webhook between a traffic source and affiliate-level", async () => {
      const sourceId = await source(who);
      const hook = await create(who);
      const bound = await patch(who, hook.id, { trafficSourceId: sourceId });
      expect(bound.json().data.trafficSourceId).toBe(sourceId);
      expect(await countRows(who.tenantId, sourceId)).toBe(1);
      const unbound = await patch(who, hook.id, { trafficSourceId: null });
      expect(unbound.statusCode).toBe(200);
      expect(unbound.json().data.trafficSourceId).toBeNull();
      expect(await countRows(who.tenantId, sourceId)).toBe(0);
    });

    it("switches between Enabled and Disabled", async () => {
      const hook = await create(who);
      expect((await patch(who, hook.id, { status: "Disabled" })).json().data.status).toBe("Disabled");
      expect((await get(who, hook.id)).json().data.status).toBe("Disabled");
      expect((await patch(who, hook.id, { status: "Enabled" })).json().data.status).toBe("Enabled");
    });

    it("re-enables a Suspended webhook and clears its statusReason", async () => {
      const hook = await create(who);
      await t.ctx.db.query(
        "update outgoing_webhooks set status = 'Suspended', status_reason = 'URL unusable at send time' where id = $1",
        [hook.id],
      );
      expect((await get(who, hook.id)).json().data).toMatchObject({
        status: "Suspended",
        statusReason: "URL unusable at send time",
      });
      // A change that does not touch the status keeps it suspended.
      const renamed = await patch(who, hook.id, { name: "Still suspended" });
      expect(renamed.json().data).toMatchObject({ status: "Suspended", statusReason: "URL unusable at send time" });

      const res = await patch(who, hook.id, { status: "Enabled" });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toMatchObject({ status: "Enabled", statusReason: null });
      expect((await get(who, hook.id)).json().data).toMatchObject({ status: "Enabled", statusReason: null });
    });

    it("refuses status Suspended from the caller, on update and on create", async () => {
      const hook = await create(who);
      const res = await patch(who, hook.id, { status: "Suspended" });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message).toContain("status");
      expect((await get(who, hook.id)).json().data).toEqual(hook);
      const created = await post(who, { name: "x", url: URL_OK, method: "GET", status: "Suspended" });
      expect(created.statusCode).toBe(400);
      expect(created.json().message).toContain("status");
    });

    it("refuses an empty patch and an unknown field", async () => {
      const hook = await create(who);
      expect((await patch(who, hook.id, {})).statusCode).toBe(400);
      const unknown = await patch(who, hook.id, { headers: { x: "y" } });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().message).toContain("headers");
      expect((await get(who, hook.id)).json().data).toEqual(hook);
    });

    it("answers 404 for an unknown id", async () => {
      const res = await patch(who, "wh_doesnotexist", { name: "x" });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("not_found");
    });
  });

  describe("delete", () => {
    it("deletes, answers { id, deleted }, and a second delete is 404", async () => {
      const who = await tenant();
      const hook = await create(who);
      const res = await remove(who, hook.id);
      expect(res.statusCode).toBe(200);
      expect(res.json()).toMatchObject({ code: "ok", data: { id: hook.id, deleted: true } });
      expect((await get(who, hook.id)).statusCode).toBe(404);
      expect((await list(who)).json().data).toEqual([]);
      const again = await remove(who, hook.id);
      expect(again.statusCode).toBe(404);
      expect(again.json().code).toBe("not_found");
    });
  });

  describe("conversion types, event names and attribution sources", () => {
    let who: Tenancy;
    beforeAll(async () => {
      who = await tenant();
    });

    it.each(["CpaCommission", "RevShareCommission", "FlatFeeCommission"])(
      "refuses the commission type %s, naming conversionTypes",
      async (type) => {
        const res = await post(who, { name: "x", url: URL_OK, method: "GET", conversionTypes: ["Deposit", type] });
        expect(res.statusCode).toBe(400);
        expect(res.json().code).toBe("validation_error");
        expect(res.json().message).toContain("conversionTypes");
        expect(res.json().message).toContain(type);
        const named = await post(who, { name: "x", url: URL_OK, method: "GET", eventNames: { [type]: "c" } });
        expect(named.statusCode).toBe(400);
        expect(named.json().message).toContain(`eventNames.${type}`);
      },
    );

    it("accepts every eligible type but Click", async () => {
      const types = ["Signup", "FirstTimeDeposit", "Qualifier", "Deposit"];
      const hook = await create(who, { conversionTypes: types });
      expect(hook.conversionTypes).toEqual(types);
    });

    it("refuses an unknown type and a repeated one", async () => {
      const unknown = await post(who, { name: "x", url: URL_OK, method: "GET", conversionTypes: ["Purchase"] });
      expect(unknown.statusCode).toBe(400);
      expect(unknown.json().message).toContain("conversionTypes");
      const twice = await post(who, { name: "x", url: URL_OK, method: "GET", conversionTypes: ["Deposit", "Deposit"] });
      expect(twice.statusCode).toBe(400);
      expect(twice.json().message).toContain("conversionTypes");
    });

    it("takes Click only while the tenant's clickWebhooks entitlement is on", async () => {
      const clicker = await tenant();
      const clickBody = { name: "Clicks", url: URL_OK, method: "GET", conversionTypes: ["Click"] };
      const refused = await post(clicker, clickBody);
      expect(refused.statusCode).toBe(400);
      expect(refused.json().message).toContain("conversionTypes");
      expect(refused.json().message).toContain("Click");
      const renamed = await post(clicker, { ...clickBody, conversionTypes: [], eventNames: { Click: "click" } });
      expect(renamed.statusCode).toBe(400);
      expect(renamed.json().message).toContain("eventNames.Click");
      const plain = await create(clicker);
      expect((await patch(clicker, plain.id, { conversionTypes: ["Click"] })).statusCode).toBe(400);

      await setClickWebhooks(t, clicker, true);
      const withKey = await post(clicker, clickBody);
      expect(withKey.statusCode).toBe(201);
      expect(withKey.json().data.conversionTypes).toEqual(["Click"]);
      const withBearer = await post(clicker.bearer, { ...clickBody, eventNames: { Click: "click" } });
      expect(withBearer.statusCode).toBe(201);
      expect(withBearer.json().data.eventNames).toEqual({ Click: "click" });
      const patched = await patch(clicker, plain.id, { conversionTypes: ["Click", "Deposit"] });
      expect(patched.statusCode).toBe(200);
      expect(patched.json().data.conversionTypes).toEqual(["Click", "Deposit"]);

      // Turned off again: refused at once, even for a key that was just used.
      await setClickWebhooks(t, clicker, false);
      expect((await post(clicker, clickBody)).statusCode).toBe(400);
      expect((await post(clicker.bearer, clickBody)).statusCode).toBe(400);
    });

    it("refuses event names keyed by a type that may not fire, or blank", async () => {
      const cases: [object, string][] = [
        [{ Purchase: "buy" }, "eventNames"],
        [{ Deposit: "" }, "eventNames.Deposit"],
        [{ Deposit: "   " }, "eventNames.Deposit"],
      ];
      for (const [eventNames, path] of cases) {
        const res = await post(who, { name: "x", url: URL_OK, method: "GET", eventNames });
        expect(res.statusCode, JSON.stringify(eventNames)).toBe(400);
        expect(res.json().message).toContain(path);
      }
      const hook = await create(who);
      const blank = await patch(who, hook.id, { eventNames: { Signup: " " } });
      expect(blank.statusCode).toBe(400);
      expect(blank.json().message).toContain("eventNames.Signup");
      expect((await get(who, hook.id)).json().data).toEqual(hook);
    });

    it("stores event names per allowed type", async () => {
      const hook = await create(who, { eventNames: { Deposit: "dep", FirstTimeDeposit: "ftd" } });
      expect(hook.eventNames).toEqual({ Deposit: "dep", FirstTimeDeposit: "ftd" });
    });

    it("accepts the five attribution sources and refuses any other or a repeat", async () => {
      const all = ["google", "meta", "microsoft", "outbrain", "direct"];
      expect((await create(who, { attributionSources: all })).attributionSources).toEqual(all);
      for (const attributionSources of [["tiktok"], ["Google"], ["meta", "meta"]]) {
        const res = await post(who, { name: "x", url: URL_OK, method: "GET", attributionSources });
        expect(res.statusCode, attributionSources.join()).toBe(400);
        expect(res.json().message).toContain("attributionSources");
      }
    });
  });

  describe("trafficSourceId", () => {
    let who: Tenancy;
    let stranger: Tenancy;
    let strangersSource: number;
    beforeAll(async () => {
      who = await tenant();
      stranger = await tenant();
      strangersSource = await source(stranger, "Not yours");
    });

    it("refuses another tenant's or a nonexistent source with 400 naming trafficSourceId", async () => {
      for (const trafficSourceId of [strangersSource, strangersSource + 100_000, 0]) {
        const res = await post(who, { name: "x", url: URL_OK, method: "GET", trafficSourceId });
        expect(res.statusCode, String(trafficSourceId)).toBe(400);
        expect(res.json().code).toBe("validation_error");
        expect(res.json().message).toContain("trafficSourceId");
        expect(res.json().data.errors[0].path).toBe("trafficSourceId");
      }
      expect(await countRows(stranger.tenantId, strangersSource)).toBe(0);
      const hook = await create(who);
      const moved = await patch(who, hook.id, { trafficSourceId: strangersSource });
      expect(moved.statusCode).toBe(400);
      expect(moved.json().message).toContain("trafficSourceId");
      expect((await get(who, hook.id)).json().data).toEqual(hook);
    });

    // An integer past PostgreSQL's bigint reaches the query unchecked (catalog ids stop at 2^53 - 1).
    it("refuses a trafficSourceId past any storable id with 400 on create, not a server error", async () => {
      const res = await post(who, { name: "x", url: URL_OK, method: "GET", trafficSourceId: 1e19 });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain("trafficSourceId");
    });

    it("refuses a trafficSourceId filter past any storable id with 400 on list, not a server error", async () => {
      const listed = await list(who, "?trafficSourceId=10000000000000000000");
      expect(listed.statusCode).toBe(400);
      expect(listed.json().message).toContain("trafficSourceId");
    });

    it("finds nothing, without error, for the largest id the catalog accepts", async () => {
      const res = await post(who, { name: "x", url: URL_OK, method: "GET", trafficSourceId: 9_007_199_254_740_991 });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain("trafficSourceId");
      expect((await list(who, "?trafficSourceId=9007199254740991")).json().data).toEqual([]);
    });

    it("deletes a traffic source's webhooks with the source, and only those", async () => {
      const owner = await tenant();
      const doomed = await source(owner, "Doomed");
      const kept = await source(owner, "Kept");
      const a = await create(owner, { trafficSourceId: doomed });
      const b = await create(owner, { trafficSourceId: doomed });
      const c = await create(owner, { trafficSourceId: kept });
      const d = await create(owner);

      // Account admin alone does not hold traffic-sources.delete: nothing goes.
      const refused = await t.call({
        method: "DELETE",
        url: `/api/v1/traffic-sources/${doomed}`,
        headers: { authorization: owner.bearer },
      });
      expect(refused.statusCode).toBe(403);
      expect((await get(owner, a.id)).statusCode).toBe(200);

      const res = await t.call({
        method: "DELETE",
        url: `/api/v1/traffic-sources/${doomed}`,
        headers: { authorization: owner.apiKey },
      });
      expect(res.statusCode).toBe(200);
      expect((await get(owner, a.id)).statusCode).toBe(404);
      expect((await get(owner, b.id)).statusCode).toBe(404);
      const left = (await list(owner)).json().data.map((w: WebhookRecord) => w.id);
      expect(left).toEqual([c.id, d.id]);
    });
  });
});
