/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_VALUES } from "../src/features/outgoing-webhooks/placeholders.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import type { Tenancy, TestApp } from "./helpers/app.js";
import type { Receiver } from "./helpers/receiver.js";
import { operationsHarness } from "./helpers/webhook-operations.js";
import {
  attemptsOf,
  conversionsAt,
  convert,
  createHook,
  enableHook,
  eventOf,
  getEvent,
  listEvents,
  PAYLOAD_KEYS,
  receiverPaths,
  resend,
  SIMULATE_ONLY,
  setClickWebhooks,
  simulate,
  WEBHOOKS_API,
  withId,
} from "./helpers/webhooks.js";

// Operations on one outgoing conversion webhook event (docs/outgoing-webhooks.md): resend, its
// attempts, and Simulate, against a real loopback receiver, with the delivery worker ticked by
// hand. Cancelling and deleting ranges: webhook-cancel-delete.test.ts.

let t: TestApp;
let rx: Receiver;
/** The instant every test starts at. */
let START: Date;
const { tick, auth, tenant, person, statusOf, app, receiver, started } = operationsHarness();
beforeAll(() => {
  t = app();
  rx = receiver();
  START = started();
});
const path = receiverPaths("/ops");

describe("POST events/{id}/resend", () => {
  it("queues a Delivered event again: the next tick sends it again, with a second attempt logged", async () => {
    const who = await tenant();
    const p = path("delivered");
    const hook = await createHook(t, who, { url: withId(rx, p) });
    const conversion = await convert(t, who);
    expect(await tick()).toBe(1);
    const event = await eventOf(t, who, conversion);
    expect(event).toMatchObject({ status: "Delivered", attempts: 1, nextAttemptAt: null, webhookId: hook.id });
    expect(await tick()).toBe(0);

    t.clock.advance(HOUR_MS);
    const res = await resend(t, who.apiKey, event.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      id: event.id,
      status: "Queued",
      attempts: 1,
      nextAttemptAt: t.clock.now().toISOString(),
    });
    expect(await statusOf(who, event.id)).toBe("Queued");

    expect(await tick()).toBe(1);
    expect(conversionsAt(rx, p)).toEqual([conversion, conversion]);
    const after = await getEvent(t, who, event.id);
    expect(after).toMatchObject({ status: "Delivered", attempts: 2, lastAttemptAt: t.clock.now().toISOString() });
    const attempts = await attemptsOf(t, who, event.id);
    expect(attempts.map((a) => [a.attempt, a.response?.status])).toEqual([
      [1, 200],
      [2, 200],
    ]);
    expect(await tick()).toBe(0);
  });

  it("queues a Failed event (ten attempts exhausted) again and the next tick sends it once more", async () => {
    const who = await tenant();
    const p = path("failing");
    rx.on(p, [...Array.from({ length: 10 }, () => ({ status: 500, body: "down" })), { status: 200, body: "ok" }]);
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await convert(t, who);
    const { id } = await eventOf(t, who, conversion);

    for (let round = 1; round <= 10; round += 1) {
      expect(await tick(), `round ${round}`).toBe(1);
      t.clock.advance(1.2 * HOUR_MS);
    }
    const failed = await getEvent(t, who, id);
    expect(failed).toMatchObject({ status: "Failed", attempts: 10, nextAttemptAt: null });
    expect(rx.at(p)).toHaveLength(10);
    t.clock.advance(DAY_MS);
    expect(await tick()).toBe(0);

    const res = await resend(t, who.apiKey, id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ status: "Queued", attempts: 10 });
    expect(await tick()).toBe(1);
    expect(conversionsAt(rx, p)).toHaveLength(11);
    expect(await getEvent(t, who, id)).toMatchObject({ status: "Delivered", attempts: 11 });
    const attempts = await attemptsOf(t, who, id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(attempts.slice(0, 10).every((a) => a.errorType === "http_status" && a.response?.status === 500)).toBe(true);
    expect(attempts[10]).toMatchObject({ errorType: null, response: { status: 200 } });
  });

  it("answers 404 for an unknown id and for another tenant's event, which stays as it was", async () => {
    const who = await tenant();
    const other = await tenant();
    const p = path("other-tenant");
    await createHook(t, other, { url: withId(rx, p) });
    const theirs = await eventOf(t, other, await convert(t, other));
    await tick();
    expect(await statusOf(other, theirs.id)).toBe("Delivered");

    for (const id of ["evt_does_not_exist", theirs.id]) {
      const res = await resend(t, who.apiKey, id);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().code).toBe("not_found");
    }
    expect(await getEvent(t, other, theirs.id)).toMatchObject({ status: "Delivered", attempts: 1 });
    expect(await tick()).toBe(0);
    expect(rx.at(p)).toHaveLength(1);
  });

  it("needs account.admin and a credential", async () => {
    const who = await tenant();
    await createHook(t, who, { url: withId(rx, path("resend-auth")) });
    const { id } = await eventOf(t, who, await convert(t, who));
    await tick();
    const reader = await person(who, ["webhooks.read", "webhooks.update", "traffic-sources.delete"]);
    expect((await resend(t, reader, id)).statusCode).toBe(403);
    const anonymous = await t.call({ method: "POST", url: `${WEBHOOKS_API}/events/${id}/resend` });
    expect(anonymous.statusCode).toBe(401);
    expect(await statusOf(who, id)).toBe("Delivered");
    expect((await resend(t, who.bearer, id)).statusCode).toBe(200);
    expect(await statusOf(who, id)).toBe("Queued");
  });
});

describe("GET events/{id}/attempts", () => {
  const attemptsPage = (who: Tenancy, id: string, query = "") =>
    t.call({ method: "GET", url: `${WEBHOOKS_API}/events/${id}/attempts${query}`, headers: auth(who.apiKey) });

  it("pages the attempt log with offset and limit, oldest first, answering the pagination", async () => {
    const who = await tenant();
    const p = path("attempt-pages");
    rx.on(p, { status: 500, body: "down" });
    await createHook(t, who, { url: withId(rx, p) });
    const { id } = await eventOf(t, who, await convert(t, who));
    for (let round = 1; round <= 3; round += 1) {
      expect(await tick(), `round ${round}`).toBe(1);
      t.clock.advance(1.2 * HOUR_MS);
    }
    expect(rx.at(p)).toHaveLength(3);

    const all = await attemptsPage(who, id);
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json().pagination).toEqual({ offset: 0, limit: 50, total: 3 });
    const allAttempts = all.json().data as { id: string; attempt: number }[];
    expect(allAttempts.map((a) => a.attempt)).toEqual([1, 2, 3]);

    const second = await attemptsPage(who, id, "?offset=1&limit=1");
    expect(second.statusCode, second.body).toBe(200);
    expect(second.json().pagination).toEqual({ offset: 1, limit: 1, total: 3 });
    expect((second.json().data as { id: string }[]).map((a) => a.id)).toEqual([allAttempts[1]?.id]);

    const past = await attemptsPage(who, id, "?offset=3&limit=2");
    expect(past.json()).toMatchObject({ data: [], pagination: { offset: 3, limit: 2, total: 3 } });

    for (const query of ["?limit=0", "?limit=501", "?offset=-1", "?offset=x"]) {
      const res = await attemptsPage(who, id, query);
      expect(res.statusCode, `${query}: ${res.body}`).toBe(400);
      expect(res.json().code).toBe("validation_error");
    }
  });

  it("documents offset, limit and the pagination in the OpenAPI document", async () => {
    const res = await t.call({ method: "GET", url: "/api/swagger/v1/swagger.json" });
    expect(res.statusCode).toBe(200);
    const doc = JSON.parse(res.body);
    const operation = doc.paths[`${WEBHOOKS_API}/events/{id}/attempts`]?.get;
    expect(operation).toBeDefined();
    const query = (operation.parameters as { in: string; name: string }[]).filter((p) => p.in === "query");
    expect(query.map((p) => p.name).sort()).toEqual(["limit", "offset"]);
    const schema = operation.responses["200"].content["application/json"].schema;
    expect(Object.keys(schema.properties).sort()).toEqual(["code", "data", "message", "pagination"]);
    expect(Object.keys(schema.properties.pagination.properties).sort()).toEqual(["limit", "offset", "total"]);
    expect(schema.properties.data.type).toBe("array");
  });
});

describe("POST settings/{id}/simulate", () => {
  const SIMULATE_QUERY = SIMULATE_ONLY.map((name) => `${name}=\${${name}}`).join("&");

  it("answers 202 'Request sent'; the tick sends the sample with every simulate-only placeholder filled", async () => {
    const who = await tenant();
    const p = path("simulate");
    const template = `${rx.base}${p}?${SIMULATE_QUERY}&type=\${conversionType}&event=\${eventName}&click=\${clickId}`;
    const hook = await createHook(t, who, { url: template, method: "POST" });

    const res = await simulate(t, who.apiKey, hook.id);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().message).toBe("Request sent");
    expect(Object.keys(res.json().data)).toEqual(["eventId"]);
    const { eventId } = res.json().data;
    expect(typeof eventId).toBe("string");
    expect(rx.at(p)).toEqual([]);

    const [event] = await listEvents(t, who, `?webhookId=${hook.id}`);
    expect(event).toMatchObject({
      id: eventId,
      webhookId: hook.id,
      simulated: true,
      status: "Queued",
      conversionType: "Deposit",
      conversionId: null,
      attempts: 0,
    });

    expect(await tick()).toBe(1);
    const [received] = rx.at(p);
    expect(received?.method).toBe("POST");
    for (const name of SIMULATE_ONLY) {
      expect(received?.query.get(name), name).toBe(SAMPLE_VALUES[name]);
      expect(received?.query.get(name), name).not.toBe("");
    }
    expect(received?.query.get("type")).toBe("Deposit");
    expect(received?.query.get("event")).toBe("Deposit");
    // Ids a receiver can tell from real ones: they start with `sim_`.
    expect(received?.query.get("click")).toBe(`sim_${SAMPLE_VALUES.clickId}`);
    expect(received?.headers["content-type"]).toBe("application/json");

    const body = JSON.parse(received?.body ?? "null");
    expect(Object.keys(body).sort()).toEqual(PAYLOAD_KEYS);
    expect(body).toMatchObject({
      conversionType: "Deposit",
      eventName: "Deposit",
      eventValue: Number(SAMPLE_VALUES.eventValue),
      currency: SAMPLE_VALUES.currencyCode,
      eventTime: START.toISOString(),
      clickId: `sim_${SAMPLE_VALUES.clickId}`,
      account: { id: Number(SAMPLE_VALUES.accountId), name: SAMPLE_VALUES.account },
      brand: { id: Number(SAMPLE_VALUES.brandId), name: SAMPLE_VALUES.brand },
      program: { id: Number(SAMPLE_VALUES.programId), name: SAMPLE_VALUES.program },
      trafficSource: { id: Number(SAMPLE_VALUES.trafficSourceId), name: SAMPLE_VALUES.trafficSource },
      attribution: {
        gclid: SAMPLE_VALUES.gclid,
        fbclid: SAMPLE_VALUES.fbclid,
        parameterA: SAMPLE_VALUES.parameterA,
        parameterB: SAMPLE_VALUES.parameterB,
        externalClickId: `sim_${SAMPLE_VALUES.externalClickId}`,
      },
    });
    expect(typeof body.conversionId).toBe("string");
    expect(Date.parse(body.clickDate)).toBeLessThan(START.getTime());
    expect(body.pageViews).toHaveLength(1);
    expect(body.pageViews[0]).toMatchObject({ url: SAMPLE_VALUES.location, title: SAMPLE_VALUES.documentTitle });

    // The outcome shows in the webhook's delivery log, marked simulated, with its attempt.
    const [delivered] = await listEvents(t, who, `?webhookId=${hook.id}`);
    expect(delivered).toMatchObject({ id: eventId, simulated: true, status: "Delivered", attempts: 1 });
    const attempts = await attemptsOf(t, who, eventId);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({
      attempt: 1,
      urlTemplate: template,
      method: "POST",
      request: { body: received?.body },
      response: { status: 200 },
      errorType: null,
    });
  });

  it("sends the type asked for, else the webhook's first filtered type, under the webhook's custom event name", async () => {
    const who = await tenant();
    const p = path("types");
    const hook = await createHook(t, who, {
      url: `${rx.base}${p}?type=\${conversionType}&event=\${eventName}`,
      conversionTypes: ["FirstTimeDeposit", "Signup"],
      eventNames: { Signup: "sign_up" },
    });
    expect((await simulate(t, who.apiKey, hook.id, {})).statusCode).toBe(202);
    expect((await simulate(t, who.apiKey, hook.id, { conversionType: "Signup" })).statusCode).toBe(202);
    expect(await tick()).toBe(2);
    const got = rx
      .at(p)
      .map((r) => `${r.query.get("type")}/${r.query.get("event")}`)
      .sort();
    expect(got).toEqual(["FirstTimeDeposit/FirstTimeDeposit", "Signup/sign_up"]);
    const events = await listEvents(t, who, `?webhookId=${hook.id}`);
    expect(events.map((e) => [e.simulated, e.status])).toEqual([
      [true, "Delivered"],
      [true, "Delivered"],
    ]);
  });

  // `POST settings/{id}/simulate` takes `{ conversionType? }`; the route declares its body optional.
  it("accepts a request with no body at all", async () => {
    const who = await tenant();
    const p = path("no-body");
    const hook = await createHook(t, who, { url: `${rx.base}${p}?type=\${conversionType}` });
    const res = await simulate(t, who.apiKey, hook.id, null);
    expect(res.statusCode, res.body).toBe(202);
    expect(await tick()).toBe(1);
    expect(rx.at(p).map((r) => r.query.get("type"))).toEqual(["Deposit"]);
  });

  it("refuses commission types and unknown types with 400, creating no event", async () => {
    const who = await tenant();
    const hook = await createHook(t, who, { url: withId(rx, path("commission")) });
    for (const conversionType of ["CpaCommission", "RevShareCommission", "FlatFeeCommission", "Purchase"]) {
      const res = await simulate(t, who.apiKey, hook.id, { conversionType });
      expect(res.statusCode, `${conversionType}: ${res.body}`).toBe(400);
      expect(res.json().message).toContain("conversionType");
    }
    expect(await listEvents(t, who, `?webhookId=${hook.id}`)).toEqual([]);
  });

  it("simulates Click only while the tenant's clickWebhooks entitlement is on", async () => {
    const who = await tenant();
    const p = path("click");
    const hook = await createHook(t, who, { url: `${rx.base}${p}?type=\${conversionType}` });

    const refused = await simulate(t, who.apiKey, hook.id, { conversionType: "Click" });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(await listEvents(t, who, `?webhookId=${hook.id}`)).toEqual([]);

    await setClickWebhooks(t, who, true);
    const accepted = await simulate(t, who.bearer, hook.id, { conversionType: "Click" });
    expect(accepted.statusCode, accepted.body).toBe(202);
    expect(await tick()).toBe(1);
    expect(rx.at(p).map((r) => r.query.get("type"))).toEqual(["Click"]);
    expect(await getEvent(t, who, accepted.json().data.eventId)).toMatchObject({
      conversionType: "Click",
      simulated: true,
      status: "Delivered",
    });

    await setClickWebhooks(t, who, false);
    expect((await simulate(t, who.bearer, hook.id, { conversionType: "Click" })).statusCode).toBe(400);
  });

  it("a live conversion renders the simulate-only placeholders empty and is not marked simulated", async () => {
    const who = await tenant();
    const p = path("live");
    const hook = await createHook(t, who, { url: `${rx.base}${p}?${SIMULATE_QUERY}&c=\${conversionId}` });
    const conversion = await convert(t, who, { type: "Deposit", value: 10, currency: "EUR" });
    const simulated = (await simulate(t, who.apiKey, hook.id)).json().data.eventId;
    expect(await tick()).toBe(2);

    const live = rx.at(p).find((r) => r.query.get("c") === conversion);
    const sample = rx.at(p).find((r) => r.query.get("c") !== conversion);
    for (const name of SIMULATE_ONLY) {
      expect(live?.query.get(name), name).toBe("");
      expect(sample?.query.get(name), name).toBe(SAMPLE_VALUES[name]);
    }
    const events = await listEvents(t, who, `?webhookId=${hook.id}`);
    expect(events.find((e) => e.conversionId === conversion)?.simulated).toBe(false);
    expect(events.find((e) => e.id === simulated)?.simulated).toBe(true);
  });

  // A Disabled webhook creates no events, simulated ones included.
  it("refuses a Disabled webhook with 409 naming the reason, creating no event; once enabled it simulates", async () => {
    const who = await tenant();
    const p = path("disabled");
    const hook = await createHook(t, who, { url: withId(rx, p), status: "Disabled" });

    const refused = await simulate(t, who.apiKey, hook.id);
    expect(refused.statusCode, refused.body).toBe(409);
    expect(refused.json().code).toBe("conflict");
    expect(refused.json().message).toContain("webhook is Disabled; enable it to simulate");
    expect(await listEvents(t, who, `?webhookId=${hook.id}`)).toEqual([]);

    // Nothing waits to go out once it is enabled again.
    await enableHook(t, who, hook.id);
    expect(await tick()).toBe(0);
    expect(rx.at(p)).toEqual([]);

    const accepted = await simulate(t, who.apiKey, hook.id);
    expect(accepted.statusCode, accepted.body).toBe(202);
    expect(await tick()).toBe(1);
    expect(rx.at(p)).toHaveLength(1);
  });

  it("answers 404 for an unknown webhook and another tenant's, 401 without a credential, 403 without account.admin", async () => {
    const who = await tenant();
    const other = await tenant();
    const theirs = await createHook(t, other, { url: withId(rx, path("theirs")) });
    const mine = await createHook(t, who, { url: withId(rx, path("mine")) });

    for (const id of ["whk_does_not_exist", theirs.id]) {
      const res = await simulate(t, who.apiKey, id);
      expect(res.statusCode, res.body).toBe(404);
    }
    expect(await listEvents(t, other)).toEqual([]);
    const anonymous = await t.call({ method: "POST", url: `${WEBHOOKS_API}/settings/${mine.id}/simulate` });
    expect(anonymous.statusCode).toBe(401);
    const notAdmin = await person(who, ["webhooks.read", "webhooks.update", "traffic-sources.delete"]);
    expect((await simulate(t, notAdmin, mine.id)).statusCode).toBe(403);
    expect(await listEvents(t, who)).toEqual([]);
    expect(await tick()).toBe(0);
  });
});
