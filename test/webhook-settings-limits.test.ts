/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS } from "../src/features/auth/index.js";
import { startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { SETTINGS, settingsApi, URL_OK, type WebhookRecord } from "./helpers/webhook-settings.js";
import { signInPerson, WEBHOOKS_API } from "./helpers/webhooks.js";

// How many webhooks a tenant may keep, and who may see and change them.
describe("outgoing webhook settings: limits and security", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 100_000 } } });
  });
  afterAll(() => t.close());

  const { tenant, source, post, get, patch, remove, create, countRows } = settingsApi(() => t);

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
