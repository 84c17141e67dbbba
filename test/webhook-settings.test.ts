/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { PERMISSIONS } from "../src/features/auth/index.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { createVia } from "./helpers/catalog.js";
import { SIMULATE_ONLY, setClickWebhooks, signInPerson, WEBHOOKS_API } from "./helpers/webhooks.js";

const SETTINGS = `${WEBHOOKS_API}/settings`;
const URL_OK = "https://receiver.example/pb?click=${clickId}&value={{eventValue}}&raw={{{gclid}}}";
const RECORD_KEYS = [
  "attributionSources",
  "conversionTypes",
  "createdAt",
  "eventNames",
  "id",
  "method",
  "name",
  "status",
  "statusReason",
  "trafficSourceId",
  "updatedAt",
  "url",
];

/** The live placeholder names a webhook URL may use (the id forms included). */
const SPEC_LIVE = [
  "clickId",
  "externalClickId",
  "eventName",
  "eventValue",
  "currencyCode",
  "eventTime",
  "eventTimeStamp",
  "conversionId",
  "conversionType",
  "parameterA",
  "parameterB",
  "gclid",
  "fbclid",
  "msclkid",
  "obclid",
  "trafficSource",
  "trafficSourceId",
  "account",
  "accountId",
  "brand",
  "brandId",
  "program",
  "programId",
  "clientUserAgent",
];

interface WebhookRecord {
  id: string;
  name: string;
  url: string;
  method: "GET" | "POST";
  trafficSourceId: number | null;
  conversionTypes: string[];
  eventNames: Record<string, string>;
  attributionSources: string[];
  status: string;
  statusReason: string | null;
  createdAt: string;
  updatedAt: string;
}

describe("outgoing webhook settings", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 100_000 } } });
  });
  afterAll(() => t.close());

  /** A fresh tenant whose API key also holds traffic-sources.delete. */
  const tenant = () => seedTenancy(t, { key: { scopes: ["traffic-sources.delete"] } });
  const source = (who: Tenancy, name = "Source") => createVia(t, who, "traffic-sources", { name });

  function post(who: Tenancy | string, payload: object) {
    const authorization = typeof who === "string" ? who : who.apiKey;
    return t.call({ method: "POST", url: SETTINGS, headers: { authorization }, payload });
  }
  function get(who: Tenancy, id: string) {
    return t.call({ method: "GET", url: `${SETTINGS}/${id}`, headers: { authorization: who.apiKey } });
  }
  function patch(who: Tenancy | string, id: string, payload: object) {
    const authorization = typeof who === "string" ? who : who.apiKey;
    return t.call({ method: "PATCH", url: `${SETTINGS}/${id}`, headers: { authorization }, payload });
  }
  function remove(who: Tenancy, id: string) {
    return t.call({ method: "DELETE", url: `${SETTINGS}/${id}`, headers: { authorization: who.apiKey } });
  }
  function list(who: Tenancy, query = "") {
    return t.call({ method: "GET", url: `${SETTINGS}${query}`, headers: { authorization: who.apiKey } });
  }
  function validate(who: Tenancy, url: string) {
    return t.call({
      method: "POST",
      url: `${SETTINGS}/validate`,
      headers: { authorization: who.apiKey },
      payload: { url },
    });
  }

  /** Creates a webhook (throws with the answer unless 201). */
  async function create(who: Tenancy, extra: object = {}, name = "Receiver"): Promise<WebhookRecord> {
    const res = await post(who, { name, url: URL_OK, method: "GET", ...extra });
    if (res.statusCode !== 201) throw new Error(`create answered ${res.statusCode}: ${res.body}`);
    return res.json().data;
  }

  async function countRows(tenantId: string, sourceId: number | null): Promise<number> {
    const [row] = await t.ctx.db.query<{ n: number }>(
      `select count(*)::int as n from outgoing_webhooks
        where tenant_id = $1 and traffic_source_id is not distinct from $2`,
      [tenantId, sourceId],
    );
    return row?.n ?? -1;
  }

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

  describe("limits: 5 affiliate-level and 5 per traffic source, counted separately", () => {
    const five = async (who: Tenancy, extra: object, prefix: string) => {
      const out: WebhookRecord[] = [];
      for (let i = 1; i <= 5; i += 1) out.push(await create(who, extra, `${prefix} ${i}`));
      return out;
    };

    it("refuses a sixth in a full scope with 409 naming the limit; other scopes still take webhooks", async () => {
      const who = await tenant();
      const a = await source(who, "A");
      const b = await source(who, "B");
      await five(who, {}, "Affiliate");
      const sixth = await post(who, { name: "Sixth", url: URL_OK, method: "GET" });
      expect(sixth.statusCode).toBe(409);
      expect(sixth.json().code).toBe("conflict");
      expect(sixth.json().message).toContain("5");
      expect(sixth.json().message).toContain("affiliate-level");
      // A Disabled one counts like any other.
      expect((await post(who, { name: "Off", url: URL_OK, method: "GET", status: "Disabled" })).statusCode).toBe(409);
      expect(await countRows(who.tenantId, null)).toBe(5);

      // The full affiliate level does not stop a source; a full source does not stop another.
      await five(who, { trafficSourceId: a }, "On A");
      const sixthOnA = await post(who, { name: "Sixth A", url: URL_OK, method: "GET", trafficSourceId: a });
      expect(sixthOnA.statusCode).toBe(409);
      expect(sixthOnA.json().code).toBe("conflict");
      expect(sixthOnA.json().message).toContain("5");
      expect(sixthOnA.json().message).toContain(`traffic source ${a}`);
      expect(await countRows(who.tenantId, a)).toBe(5);
      expect((await post(who, { name: "On B", url: URL_OK, method: "GET", trafficSourceId: b })).statusCode).toBe(201);

      // Another tenant's limits are its own.
      const other = await tenant();
      expect((await post(other, { name: "Mine", url: URL_OK, method: "GET" })).statusCode).toBe(201);
    });

    it("refuses moving a webhook onto a full scope by PATCH, leaving it where it was", async () => {
      const who = await tenant();
      const a = await source(who, "A");
      const b = await source(who, "B");
      const onA = await five(who, { trafficSourceId: a }, "On A");
      await five(who, {}, "Affiliate");
      const onB = await create(who, { trafficSourceId: b }, "On B");

      const toA = await patch(who, onB.id, { trafficSourceId: a });
      expect(toA.statusCode).toBe(409);
      expect(toA.json().code).toBe("conflict");
      expect(toA.json().message).toContain(`traffic source ${a}`);
      const toAffiliate = await patch(who, onB.id, { trafficSourceId: null, name: "Moved" });
      expect(toAffiliate.statusCode).toBe(409);
      expect(toAffiliate.json().message).toContain("affiliate-level");
      expect((await get(who, onB.id)).json().data).toEqual(onB);
      expect(await countRows(who.tenantId, a)).toBe(5);

      // Staying in its own full scope is no move: a webhook does not count against itself.
      const first = onA[0] as WebhookRecord;
      const same = await patch(who, first.id, { trafficSourceId: a, name: "Same place" });
      expect(same.statusCode).toBe(200);
      expect(same.json().data.trafficSourceId).toBe(a);

      // Moving one off A frees a place there.
      expect((await patch(who, first.id, { trafficSourceId: b })).statusCode).toBe(200);
      expect((await patch(who, onB.id, { trafficSourceId: a })).statusCode).toBe(200);
      expect(await countRows(who.tenantId, a)).toBe(5);
    });

    it("frees a place when one is deleted", async () => {
      const who = await tenant();
      const hooks = await five(who, {}, "Affiliate");
      expect((await post(who, { name: "Sixth", url: URL_OK, method: "GET" })).statusCode).toBe(409);
      expect((await remove(who, (hooks[2] as WebhookRecord).id)).statusCode).toBe(200);
      expect((await post(who, { name: "Replacement", url: URL_OK, method: "GET" })).statusCode).toBe(201);
      expect((await post(who, { name: "Sixth again", url: URL_OK, method: "GET" })).statusCode).toBe(409);
      expect(await countRows(who.tenantId, null)).toBe(5);
    });

    it("never lets eight concurrent creates exceed five, per scope", async () => {
      const who = await tenant();
      const a = await source(who, "A");
      for (const trafficSourceId of [null, a]) {
        const answers = await Promise.all(
          Array.from({ length: 8 }, (_, i) =>
            post(who, { name: `Racer ${i}`, url: URL_OK, method: "GET", trafficSourceId }),
          ),
        );
        const codes = answers.map((r) => r.statusCode).sort();
        expect(codes).toEqual([201, 201, 201, 201, 201, 409, 409, 409]);
        expect(await countRows(who.tenantId, trafficSourceId)).toBe(5);
      }
    });
  });

  describe("URL validation on save", () => {
    let who: Tenancy;
    beforeAll(async () => {
      who = await tenant();
    });

    const BAD: [string, string, string][] = [
      ["an unknown placeholder", "https://receiver.example/?c=${clickid2}", "${clickid2}"],
      ["a dotted placeholder", "https://receiver.example/?c=${click.id}", "${click.id}"],
      ["a dotted placeholder in braces", "https://receiver.example/?c={{click.id}}", "{{click.id}}"],
      ["an unknown raw placeholder", "https://receiver.example/?c={{{secret}}}", "{{{secret}}}"],
      ["an empty placeholder", "https://receiver.example/?c=${}", "${}"],
    ];

    it.each(BAD)("refuses %s with a message naming it exactly", async (_label, url, placeholder) => {
      const res = await post(who, { name: "Bad", url, method: "GET" });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message).toContain(placeholder);
      expect(res.json().data.errors).toEqual([{ path: "url", message: expect.stringContaining(placeholder) }]);
    });

    const NOT_WEB: [string, string][] = [
      ["ftp", "ftp://receiver.example/?c=${clickId}"],
      ["javascript", "javascript:alert(1)"],
      ["a relative path", "/postback?c=${clickId}"],
      ["a host-less address", "receiver.example/postback"],
      ["a scheme without //", "https:receiver.example/x"],
      ["a placeholder alone", "${clickId}"],
      ["a host only a simulate-only name fills", "https://${location}/x"],
    ];

    it.each(NOT_WEB)("refuses %s as not an absolute http(s) address", async (_label, url) => {
      const res = await post(who, { name: "Bad", url, method: "GET" });
      expect(res.statusCode).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message).toMatch(/http or https/);
      expect(res.json().data.errors[0].path).toBe("url");
    });

    // A value the conversion does not have renders empty: a URL that is then no web
    // address would only be found at send time, suspending the webhook as 'Webhook URL Is Invalid'.
    it("refuses a URL that is no web address once a placeholder renders empty, naming the placeholder", async () => {
      const url = "https://{{{parameterA}}}/postback";
      const res = await post(who, { name: "Host from a value", url, method: "GET" });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message).toContain("{{{parameterA}}}");
      expect(res.json().message).toContain("empty");
      expect(res.json().message).toContain("'https:///postback'");
      expect(res.json().data.errors).toEqual([{ path: "url", message: res.json().message }]);

      const hook = await create(who, {}, "Patched to a host from a value");
      const patched = await patch(who, hook.id, { url: "https://{{{parameterA}}}{{{parameterB}}}/postback" });
      expect(patched.statusCode, patched.body).toBe(400);
      expect(patched.json().message).toMatch(/placeholders are empty.*'https:\/\/\/postback'/);
      expect((await get(who, hook.id)).json().data).toEqual(hook);
      expect((await remove(who, hook.id)).statusCode).toBe(200);

      // Still accepted: an empty value that leaves a web address behind.
      const fine = await post(who, {
        name: "Value in the path",
        url: "https://r.example/{{{parameterA}}}/pb",
        method: "GET",
      });
      expect(fine.statusCode, fine.body).toBe(201);
      expect((await remove(who, fine.json().data.id)).statusCode).toBe(200);
    });

    it("stores nothing for a refused URL", async () => {
      expect((await list(who)).json().pagination?.total).toBe(0);
    });

    it("leaves the row unchanged when a PATCH carries a bad url", async () => {
      const hook = await create(who);
      t.clock.advance(1000);
      const res = await patch(who, hook.id, { name: "Changed", url: "https://receiver.example/?c=${clickid2}" });
      expect(res.statusCode).toBe(400);
      expect(res.json().message).toContain("${clickid2}");
      const notWeb = await patch(who, hook.id, { url: "mailto:someone@example.com" });
      expect(notWeb.statusCode).toBe(400);
      expect((await get(who, hook.id)).json().data).toEqual(hook);
    });
  });

  describe("POST settings/validate", () => {
    let who: Tenancy;
    beforeAll(async () => {
      who = await tenant();
    });

    it("answers valid with a sample URL for a good template, simulate-only names included", async () => {
      const res = await validate(who, "https://receiver.example/?c=${clickId}&camp={{campaign}}");
      expect(res.statusCode).toBe(200);
      const data = res.json().data;
      expect(Object.keys(data).sort()).toEqual(["message", "placeholder", "sampleUrl", "valid"]);
      expect(data).toMatchObject({ valid: true, placeholder: null });
      expect(typeof data.message).toBe("string");
      expect(data.sampleUrl).toMatch(/^https:\/\/receiver\.example\/\?c=[^&$]+&camp=[^&]+$/);
      expect(data.sampleUrl).not.toContain("{");
    });

    it("URL-encodes ${name} and {{name}} values and leaves {{{name}}} raw", async () => {
      const data = (await validate(who, "https://r.example/?a=${clientUserAgent}&b={{{clientUserAgent}}}")).json().data;
      expect(data.valid).toBe(true);
      const [, encoded, raw] = /\?a=(.*)&b=(.*)$/.exec(data.sampleUrl) ?? [];
      expect(raw).toBeTruthy();
      expect(encoded).toBe(encodeURIComponent(raw as string));
    });

    it("answers 200 valid false naming the placeholder for an unknown one, like the save refusal", async () => {
      const url = "https://receiver.example/?c=${clickid2}";
      const res = await validate(who, url);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        valid: false,
        message: expect.stringContaining("${clickid2}"),
        placeholder: "${clickid2}",
        sampleUrl: null,
      });
      const saved = await post(who, { name: "Bad", url, method: "GET" });
      expect(saved.json().message).toBe(res.json().data.message);
    });

    it("names a dotted placeholder as written", async () => {
      const data = (await validate(who, "https://receiver.example/?c={{ click.id }}")).json().data;
      expect(data).toMatchObject({ valid: false, placeholder: "{{ click.id }}", sampleUrl: null });
      expect(data.message).toContain("{{ click.id }}");
    });

    it("answers valid false for an address that is not http(s) or not absolute", async () => {
      for (const url of ["ftp://receiver.example/", "/relative?c=${clickId}", "not a url"]) {
        const res = await validate(who, url);
        expect(res.statusCode).toBe(200);
        expect(res.json().data).toMatchObject({ valid: false, placeholder: null, sampleUrl: null });
        expect(res.json().data.message).toMatch(/http or https/);
      }
    });

    it("answers valid false naming the placeholder whose empty value leaves no web address", async () => {
      const res = await validate(who, "https://{{{parameterA}}}/postback");
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toEqual({
        valid: false,
        message: expect.stringContaining("{{{parameterA}}}"),
        placeholder: "{{{parameterA}}}",
        sampleUrl: null,
      });
    });

    it("saves nothing", async () => {
      await validate(who, URL_OK);
      expect((await list(who)).json().pagination?.total).toBe(0);
    });
  });

  describe("GET placeholders", () => {
    let who: Tenancy;
    let names: { name: string; simulateOnly: boolean }[];
    beforeAll(async () => {
      who = await tenant();
      const res = await t.call({
        method: "GET",
        url: `${WEBHOOKS_API}/placeholders`,
        headers: { authorization: who.apiKey },
      });
      expect(res.statusCode).toBe(200);
      names = res.json().data;
    });

    it("lists every placeholder name, the simulate-only ones flagged", () => {
      const byName = new Map(names.map((p) => [p.name, p.simulateOnly]));
      for (const name of SPEC_LIVE) expect(byName.get(name), name).toBe(false);
      for (const name of SIMULATE_ONLY) expect(byName.get(name), name).toBe(true);
      for (const p of names) expect(Object.keys(p).sort()).toEqual(["name", "simulateOnly"]);
    });

    it("lists each name once (names are case-insensitive)", () => {
      const lower = names.map((p) => p.name.toLowerCase());
      expect(new Set(lower).size).toBe(lower.length);
    });

    it("lists only names a saved URL may use", async () => {
      for (const { name } of names) {
        const data = (await validate(who, `https://receiver.example/?x=\${${name}}`)).json().data;
        expect(data.valid, name).toBe(true);
      }
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

  describe("security", () => {
    let owner: Tenancy;
    let hook: WebhookRecord;
    /** Signed in on the owner's tenant with every permission but account.admin. */
    let nonAdmin: string;

    beforeAll(async () => {
      owner = await tenant();
      hook = await create(owner);
      const person = await signInPerson(t, owner.tenantId, {
        name: "Not an admin",
        permissions: PERMISSIONS.filter((p) => p !== "account.admin"),
      });
      nonAdmin = person.bearer;
    });

    type Route = [string, "GET" | "POST" | "PATCH" | "DELETE", (id: string) => string, object | undefined];
    const ROUTES: Route[] = [
      ["create", "POST", () => SETTINGS, { name: "x", url: URL_OK, method: "GET" }],
      ["list", "GET", () => SETTINGS, undefined],
      ["get", "GET", (id) => `${SETTINGS}/${id}`, undefined],
      ["update", "PATCH", (id) => `${SETTINGS}/${id}`, { name: "Hijacked" }],
      ["delete", "DELETE", (id) => `${SETTINGS}/${id}`, undefined],
      ["validate", "POST", () => `${SETTINGS}/validate`, { url: URL_OK }],
      ["placeholders", "GET", () => `${WEBHOOKS_API}/placeholders`, undefined],
    ];

    it.each(ROUTES)("%s is 401 without a valid credential, even with a bad body", async (_name, method, url) => {
      const bad = method === "POST" || method === "PATCH" ? { payload: { bogus: true } } : {};
      for (const headers of [{}, { authorization: "ApiKey not-a-real-key" }, { authorization: "Bearer not.a.jwt" }]) {
        const res = await t.call({ method, url: url(hook.id), headers, ...bad });
        expect(res.statusCode).toBe(401);
        expect(res.json().code).toBe("unauthorized");
      }
    });

    it.each(ROUTES)("%s is 403 for a signed-in person without account.admin", async (_name, method, url, payload) => {
      const res = await t.call({
        method,
        url: url(hook.id),
        headers: { authorization: nonAdmin },
        ...(payload ? { payload } : {}),
      });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("forbidden");
      expect(res.json().message).toContain("account.admin");
      // 403 comes before any lookup: an unknown id is refused the same way.
      if (url("x") !== url("y")) {
        const unknown = await t.call({
          method,
          url: url("wh_doesnotexist"),
          headers: { authorization: nonAdmin },
          ...(payload ? { payload } : {}),
        });
        expect(unknown.statusCode).toBe(403);
      }
      expect((await get(owner, hook.id)).json().data).toEqual(hook);
      expect(await countRows(owner.tenantId, null)).toBe(1);
    });

    it("lets a signed-in account admin manage webhooks", async () => {
      const created = await post(owner.bearer, { name: "By a person", url: URL_OK, method: "GET" });
      expect(created.statusCode).toBe(201);
      const res = await t.call({
        method: "DELETE",
        url: `${SETTINGS}/${created.json().data.id}`,
        headers: { authorization: owner.bearer },
      });
      expect(res.statusCode).toBe(200);
    });

    it("answers 404 for another tenant's webhook on get, update and delete, changing nothing", async () => {
      const stranger = await tenant();
      const read = await get(stranger, hook.id);
      expect(read.statusCode).toBe(404);
      expect(read.json().code).toBe("not_found");
      expect((await patch(stranger, hook.id, { name: "Hijacked" })).statusCode).toBe(404);
      expect((await patch(stranger, hook.id, { status: "Disabled" })).statusCode).toBe(404);
      expect((await remove(stranger, hook.id)).statusCode).toBe(404);
      expect((await get(owner, hook.id)).json().data).toEqual(hook);
    });

    it("writes outgoing_webhook.created, .updated and .deleted to the audit log", async () => {
      const who = await tenant();
      const made = await create(who, {}, "Audited");
      await patch(who, made.id, { name: "Audited again" });
      await remove(who, made.id);
      const refused = await post(who, { name: "Bad", url: "https://r.example/${nope}", method: "GET" });
      expect(refused.statusCode).toBe(400);
      const rows = await t.ctx.db.query<{
        action: string;
        subject_type: string;
        subject_id: string;
        actor_type: string;
      }>(
        `select action, subject_type, subject_id, actor_type from audit_log
          where tenant_id = $1 and action like 'outgoing_webhook.%' order by at, action`,
        [who.tenantId],
      );
      expect(rows.map((r) => r.action).sort()).toEqual([
        "outgoing_webhook.created",
        "outgoing_webhook.deleted",
        "outgoing_webhook.updated",
      ]);
      for (const row of rows) {
        expect(row).toMatchObject({ subject_type: "outgoing_webhook", subject_id: made.id, actor_type: "api_key" });
      }
    });
  });
});
