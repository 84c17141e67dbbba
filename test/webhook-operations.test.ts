/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Attempt, DeliveryEvent as Event } from "../src/features/outgoing-webhooks/event-service.js";
import { SAMPLE_VALUES } from "../src/features/outgoing-webhooks/placeholders.js";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";

// Operations on outgoing conversion webhook events (spec part 4 "Outgoing conversion webhooks",
// 5.12; API.md "Outgoing conversion webhooks"): resend, cancel a range, delete one or a range,
// and Simulate, against a real loopback receiver, with the delivery worker ticked by hand.

const BASE = "/api/v1/conversions/outgoing/webhooks";
const ENV = { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_TIMEOUT_MS: "500" };
const HOUR = 3_600_000;
const DAY = 24 * HOUR;
const SIMULATE_ONLY = [
  "medium",
  "campaign",
  "term",
  "content",
  "creative",
  "location",
  "locationPath",
  "documentTitle",
] as const;

let t: TestApp;
let rx: Receiver;
/** The instant every test starts at: tests move the clock, afterEach puts it back. */
let START: Date;
let pathCounter = 0;
let personCounter = 0;

beforeAll(async () => {
  t = await startTestApp({ env: ENV, app: { rateLimit: { max: 100_000 } } });
  rx = await startReceiver();
  START = t.clock.now();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
// A tick claims due events of every tenant: nothing a test leaves waiting may reach the next one.
afterEach(async () => {
  await t.ctx.db.query("update webhook_events set status = 'Cancelled' where status in ('Queued', 'Retrying')");
  t.clock.set(START);
});

/** A receiver path of its own for each use, so tests never see each other's requests. */
const path = (name: string) => `/ops${++pathCounter}/${name}`;
const withId = (p: string) => `${rx.base}${p}?c=\${conversionId}`;
/** The conversion ids a receiver path got, in order. */
const conversionsAt = (p: string) => rx.at(p).map((r) => r.query.get("c"));
const tick = () => t.ctx.delivery.tick();
const auth = (authorization: string) => ({ authorization });

/** A tenant whose person is account.admin only and whose key also carries traffic-sources.delete. */
const tenant = () => seedTenancy(t, { key: { scopes: ["traffic-sources.delete"] } });

/** Another signed-in person on the tenant, with exactly these permissions; returns the bearer header. */
async function person(who: Tenancy, permissions: string[]): Promise<string> {
  personCounter += 1;
  const email = `ops-person${personCounter}-${Date.now()}@example.com`;
  const password = "correct horse battery";
  const created = await t.call({
    method: "POST",
    url: `/api/admin/tenants/${who.tenantId}/users`,
    headers: auth(`Bearer ${ADMIN_KEY}`),
    payload: { email, password, name: `Ops person ${personCounter}`, permissions },
  });
  expect(created.statusCode, created.body).toBe(201);
  const login = await t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });
  expect(login.statusCode, login.body).toBe(200);
  return `Bearer ${login.json().data.token}`;
}

async function createHook(who: Tenancy, body: Record<string, unknown>): Promise<{ id: string; url: string }> {
  const res = await t.call({
    method: "POST",
    url: `${BASE}/settings`,
    headers: auth(who.apiKey),
    payload: { name: "Receiver", method: "GET", ...body },
  });
  if (res.statusCode !== 201) throw new Error(`creating a webhook answered ${res.statusCode}: ${res.body}`);
  return res.json().data;
}

async function suspend(hookId: string): Promise<void> {
  await t.ctx.db.query("update outgoing_webhooks set status = 'Suspended', status_reason = 'test' where id = $1", [
    hookId,
  ]);
}

async function enable(who: Tenancy, hookId: string): Promise<void> {
  const res = await t.call({
    method: "PATCH",
    url: `${BASE}/settings/${hookId}`,
    headers: auth(who.apiKey),
    payload: { status: "Enabled" },
  });
  expect(res.statusCode, res.body).toBe(200);
}

async function convert(who: Tenancy, payload: Record<string, unknown> = { type: "Signup" }): Promise<string> {
  const res = await t.call({ method: "POST", url: "/api/v1/conversions", headers: auth(who.apiKey), payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id;
}

async function listEvents(who: Tenancy, query = ""): Promise<Event[]> {
  const res = await t.call({ method: "GET", url: `${BASE}/events${query}`, headers: auth(who.apiKey) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** The one event a conversion made for a webhook. */
async function eventOf(who: Tenancy, conversionId: string, webhookId?: string): Promise<Event> {
  const events = (await listEvents(who, `?conversionId=${conversionId}`)).filter(
    (e) => webhookId === undefined || e.webhookId === webhookId,
  );
  expect(events).toHaveLength(1);
  return events[0] as Event;
}

async function getEvent(who: Tenancy, id: string): Promise<Event> {
  const res = await t.call({ method: "GET", url: `${BASE}/events/${id}`, headers: auth(who.apiKey) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

const statusOf = async (who: Tenancy, id: string) => (await getEvent(who, id)).status;

async function attemptsOf(who: Tenancy, id: string): Promise<Attempt[]> {
  const res = await t.call({ method: "GET", url: `${BASE}/events/${id}/attempts`, headers: auth(who.apiKey) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** Attempt rows in the table, whatever the API still shows. */
async function attemptRows(eventIds: string[]): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: string | number }>(
    "select count(*) as n from webhook_attempts where event_id = any($1::text[])",
    [eventIds],
  );
  return Number(row?.n);
}

const resend = (authorization: string, id: string) =>
  t.call({ method: "POST", url: `${BASE}/events/${id}/resend`, headers: auth(authorization) });
const cancel = (authorization: string, payload: Record<string, unknown>) =>
  t.call({ method: "POST", url: `${BASE}/events/cancel`, headers: auth(authorization), payload });
const deleteRange = (authorization: string, payload: Record<string, unknown>) =>
  t.call({ method: "POST", url: `${BASE}/events/delete`, headers: auth(authorization), payload });
const deleteOne = (authorization: string, id: string) =>
  t.call({ method: "DELETE", url: `${BASE}/events/${id}`, headers: auth(authorization) });
/** `payload: null` sends no body at all. */
const simulate = (authorization: string, hookId: string, payload: Record<string, unknown> | null = {}) =>
  t.call({
    method: "POST",
    url: `${BASE}/settings/${hookId}/simulate`,
    headers: auth(authorization),
    ...(payload === null ? {} : { payload }),
  });

/** `YYYY-MM-DD` of the UTC day `n` days before START's. */
function dayBefore(n: number): string {
  return new Date(START.getTime() - n * DAY).toISOString().slice(0, 10);
}

/** Records a conversion at `at` (the clock moved there) and returns its id. */
async function convertAt(who: Tenancy, at: string): Promise<string> {
  t.clock.set(at);
  return convert(who);
}

describe("POST events/{id}/resend", () => {
  it("queues a Delivered event again: the next tick sends it again, with a second attempt logged", async () => {
    const who = await tenant();
    const p = path("delivered");
    const hook = await createHook(who, { url: withId(p) });
    const conversion = await convert(who);
    expect(await tick()).toBe(1);
    const event = await eventOf(who, conversion);
    expect(event).toMatchObject({ status: "Delivered", attempts: 1, nextAttemptAt: null, webhookId: hook.id });
    expect(await tick()).toBe(0);

    t.clock.advance(HOUR);
    const res = await resend(who.apiKey, event.id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      id: event.id,
      status: "Queued",
      attempts: 1,
      nextAttemptAt: t.clock.now().toISOString(),
    });
    expect(await statusOf(who, event.id)).toBe("Queued");

    expect(await tick()).toBe(1);
    expect(conversionsAt(p)).toEqual([conversion, conversion]);
    const after = await getEvent(who, event.id);
    expect(after).toMatchObject({ status: "Delivered", attempts: 2, lastAttemptAt: t.clock.now().toISOString() });
    const attempts = await attemptsOf(who, event.id);
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
    await createHook(who, { url: withId(p) });
    const conversion = await convert(who);
    const { id } = await eventOf(who, conversion);

    for (let round = 1; round <= 10; round += 1) {
      expect(await tick(), `round ${round}`).toBe(1);
      t.clock.advance(1.2 * HOUR);
    }
    const failed = await getEvent(who, id);
    expect(failed).toMatchObject({ status: "Failed", attempts: 10, nextAttemptAt: null });
    expect(rx.at(p)).toHaveLength(10);
    t.clock.advance(DAY);
    expect(await tick()).toBe(0);

    const res = await resend(who.apiKey, id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ status: "Queued", attempts: 10 });
    expect(await tick()).toBe(1);
    expect(conversionsAt(p)).toHaveLength(11);
    expect(await getEvent(who, id)).toMatchObject({ status: "Delivered", attempts: 11 });
    const attempts = await attemptsOf(who, id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11]);
    expect(attempts.slice(0, 10).every((a) => a.errorType === "http_status" && a.response?.status === 500)).toBe(true);
    expect(attempts[10]).toMatchObject({ errorType: null, response: { status: 200 } });
  });

  it("answers 404 for an unknown id and for another tenant's event, which stays as it was", async () => {
    const who = await tenant();
    const other = await tenant();
    const p = path("other-tenant");
    await createHook(other, { url: withId(p) });
    const theirs = await eventOf(other, await convert(other));
    await tick();
    expect(await statusOf(other, theirs.id)).toBe("Delivered");

    for (const id of ["evt_does_not_exist", theirs.id]) {
      const res = await resend(who.apiKey, id);
      expect(res.statusCode, res.body).toBe(404);
      expect(res.json().code).toBe("not_found");
    }
    expect(await getEvent(other, theirs.id)).toMatchObject({ status: "Delivered", attempts: 1 });
    expect(await tick()).toBe(0);
    expect(rx.at(p)).toHaveLength(1);
  });

  it("needs account.admin and a credential", async () => {
    const who = await tenant();
    await createHook(who, { url: withId(path("resend-auth")) });
    const { id } = await eventOf(who, await convert(who));
    await tick();
    const reader = await person(who, ["webhooks.read", "webhooks.update", "traffic-sources.delete"]);
    expect((await resend(reader, id)).statusCode).toBe(403);
    const anonymous = await t.call({ method: "POST", url: `${BASE}/events/${id}/resend` });
    expect(anonymous.statusCode).toBe(401);
    expect(await statusOf(who, id)).toBe("Delivered");
    expect((await resend(who.bearer, id)).statusCode).toBe(200);
    expect(await statusOf(who, id)).toBe("Queued");
  });
});

describe("POST events/cancel", () => {
  it("cancels the waiting events created in the range (whole UTC days, both ends), never Delivered ones", async () => {
    const who = await tenant();
    const [pOk, pDown] = [path("ok"), path("down")];
    rx.on(pDown, { status: 503 });
    const ok = await createHook(who, { url: withId(pOk) });
    const down = await createHook(who, { url: withId(pDown) });
    const [day1, day2, day3, day4] = [dayBefore(5), dayBefore(4), dayBefore(3), dayBefore(2)];

    // Before the range: one Delivered, one Retrying.
    const a = await convertAt(who, `${day1}T23:59:59.999Z`);
    expect(await tick()).toBe(2);
    // First instant of the range: one Delivered, one Retrying.
    const b = await convertAt(who, `${day2}T00:00:00.000Z`);
    expect(await tick()).toBe(2);
    // Inside: two Queued, one of them put on Held (over allowance).
    const c = await convertAt(who, `${day2}T12:00:00.000Z`);
    await t.ctx.db.query("update webhook_events set status = 'Held' where conversion_id = $1 and webhook_id = $2", [
      c,
      down.id,
    ]);
    // Last instant of the range: one Queued, one Paused (webhook suspended).
    await suspend(down.id);
    const d = await convertAt(who, `${day3}T23:59:59.999Z`);
    // After the range: one Queued, one Paused.
    const e = await convertAt(who, `${day4}T00:00:00.000Z`);

    const ev = async (conversion: string, hookId: string) => (await eventOf(who, conversion, hookId)).id;
    const ids = {
      a1: await ev(a, ok.id),
      a2: await ev(a, down.id),
      b1: await ev(b, ok.id),
      b2: await ev(b, down.id),
      c1: await ev(c, ok.id),
      c2: await ev(c, down.id),
      d1: await ev(d, ok.id),
      d2: await ev(d, down.id),
      e1: await ev(e, ok.id),
      e2: await ev(e, down.id),
    };
    const statuses = async () => {
      const out: Record<string, string> = {};
      for (const [name, id] of Object.entries(ids)) out[name] = await statusOf(who, id);
      return out;
    };
    expect(await statuses()).toEqual({
      a1: "Delivered",
      a2: "Retrying",
      b1: "Delivered",
      b2: "Retrying",
      c1: "Queued",
      c2: "Held",
      d1: "Queued",
      d2: "Paused",
      e1: "Queued",
      e2: "Paused",
    });

    t.clock.set(START);
    const res = await cancel(who.apiKey, { dateFrom: day2, dateTo: day3 });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ cancelled: 5 });
    expect(await statuses()).toEqual({
      a1: "Delivered",
      a2: "Retrying",
      b1: "Delivered",
      b2: "Cancelled",
      c1: "Cancelled",
      c2: "Cancelled",
      d1: "Cancelled",
      d2: "Cancelled",
      e1: "Queued",
      e2: "Paused",
    });
    expect((await getEvent(who, ids.b2)).nextAttemptAt).toBeNull();
    expect(await attemptsOf(who, ids.b1)).toHaveLength(1);

    // Days later: only what is still waiting is claimed (a2's retry, paused on the suspended
    // webhook, and e1); nothing cancelled is.
    expect(await tick()).toBe(2);
    expect(conversionsAt(pOk)).toEqual([a, b, e]);
    expect(conversionsAt(pDown)).toEqual([a, b]);
    expect(await statusOf(who, ids.a2)).toBe("Paused");
    expect(await attemptsOf(who, ids.b2)).toHaveLength(1);
    // Re-enabling the webhook sends nothing cancelled either.
    await enable(who, down.id);
    for (let round = 0; round < 3; round += 1) {
      t.clock.advance(2 * HOUR);
      await tick();
    }
    expect(conversionsAt(pDown).filter((x) => x === b)).toHaveLength(1);
    expect(conversionsAt(pDown)).not.toContain(c);
    expect(conversionsAt(pDown)).not.toContain(d);
    expect(conversionsAt(pOk)).toEqual([a, b, e]);
    // The same range again: nothing left to cancel.
    expect((await cancel(who.apiKey, { dateFrom: day2, dateTo: day3 })).json().data).toEqual({ cancelled: 0 });
  });

  // API.md: Paused = "webhook suspended; sent when re-enabled". Cancel must stop exactly those in the range.
  it("a cancelled Paused event stays unsent when its webhook is re-enabled; a Paused one outside the range goes out", async () => {
    const who = await tenant();
    const p = path("paused");
    const hook = await createHook(who, { url: withId(p) });
    await suspend(hook.id);
    const inRange = await convertAt(who, `${dayBefore(3)}T12:00:00.000Z`);
    const outside = await convertAt(who, `${dayBefore(1)}T12:00:00.000Z`);
    t.clock.set(START);
    const range = { dateFrom: dayBefore(3), dateTo: dayBefore(3) };
    expect((await cancel(who.apiKey, range)).json().data).toEqual({ cancelled: 1 });
    expect(await statusOf(who, (await eventOf(who, inRange)).id)).toBe("Cancelled");
    expect(await statusOf(who, (await eventOf(who, outside)).id)).toBe("Paused");

    await enable(who, hook.id);
    await tick();
    t.clock.advance(2 * HOUR);
    await tick();
    expect(conversionsAt(p)).toEqual([outside]);
    expect(await statusOf(who, (await eventOf(who, outside)).id)).toBe("Delivered");
    expect(await statusOf(who, (await eventOf(who, inRange)).id)).toBe("Cancelled");
  });

  it("takes date-times with offsets (inclusive) and narrows to one webhook's events with webhookId", async () => {
    const who = await tenant();
    const other = await tenant();
    const h1 = await createHook(who, { url: withId(path("h1")) });
    const h2 = await createHook(who, { url: withId(path("h2")) });
    const theirs = await createHook(other, { url: withId(path("theirs")) });
    const day = dayBefore(3);
    const early = await convertAt(who, `${day}T09:59:59.999Z`);
    const onTime = await convertAt(who, `${day}T10:00:00.000Z`);
    const theirEvent = (await eventOf(other, await convertAt(other, `${day}T10:00:00.000Z`))).id;
    t.clock.set(START);

    // 12:00 at +02:00 is 10:00Z: both bounds on that instant take exactly the events created then.
    const instant = { dateFrom: `${day}T12:00:00+02:00`, dateTo: `${day}T12:00:00+02:00` };
    const narrowed = await cancel(who.apiKey, { ...instant, webhookId: h1.id });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json().data).toEqual({ cancelled: 1 });
    expect(await statusOf(who, (await eventOf(who, onTime, h1.id)).id)).toBe("Cancelled");
    expect(await statusOf(who, (await eventOf(who, onTime, h2.id)).id)).toBe("Queued");
    expect(await statusOf(who, (await eventOf(who, early, h1.id)).id)).toBe("Queued");

    // Another tenant's webhook id matches nothing of ours, and their events are never touched.
    expect((await cancel(who.apiKey, { ...instant, webhookId: theirs.id })).json().data).toEqual({ cancelled: 0 });
    expect((await cancel(who.apiKey, instant)).json().data).toEqual({ cancelled: 1 });
    expect(await statusOf(who, (await eventOf(who, onTime, h2.id)).id)).toBe("Cancelled");
    expect(await statusOf(other, theirEvent)).toBe("Queued");
    expect(await statusOf(who, (await eventOf(who, early, h2.id)).id)).toBe("Queued");
  });

  it("stops an event whose attempt is in flight: the attempt's outcome does not overwrite Cancelled", async () => {
    const who = await tenant();
    const p = path("slow");
    rx.on(p, [{ status: 500 }]);
    await createHook(who, { url: `${rx.base}${p}?c=\${conversionId}` });
    const conversion = await convert(who);
    const { id } = await eventOf(who, conversion);
    rx.on(p, "hang");
    const ticking = tick();
    await rx.waitFor(p, 5_000);
    const today = START.toISOString().slice(0, 10);
    expect((await cancel(who.apiKey, { dateFrom: today, dateTo: today })).json().data).toEqual({ cancelled: 1 });
    expect(await ticking).toBe(1);
    const after = await getEvent(who, id);
    expect(after).toMatchObject({ status: "Cancelled", nextAttemptAt: null });
    // The attempt itself is logged; nothing follows it.
    expect((await attemptsOf(who, id)).map((a) => a.errorType)).toEqual(["timeout"]);
    t.clock.advance(2 * HOUR);
    expect(await tick()).toBe(0);
  });

  it("needs traffic-sources.delete on top of account.admin, and both dates", async () => {
    const who = await tenant();
    await createHook(who, { url: withId(path("cancel-auth")) });
    const { id } = await eventOf(who, await convert(who));
    const today = START.toISOString().slice(0, 10);
    const range = { dateFrom: today, dateTo: today };

    const deleterOnly = await person(who, ["traffic-sources.delete"]);
    const plainKey = await seedTenancy(t); // a key without scopes, on a tenant of its own
    for (const [who_, authorization] of [
      ["account.admin person", who.bearer],
      ["traffic-sources.delete person without account.admin", deleterOnly],
    ] as const) {
      const res = await cancel(authorization, range);
      expect(res.statusCode, `${who_}: ${res.body}`).toBe(403);
    }
    expect((await cancel(plainKey.apiKey, range)).statusCode).toBe(403);
    expect((await t.call({ method: "POST", url: `${BASE}/events/cancel`, payload: range })).statusCode).toBe(401);
    expect(await statusOf(who, id)).toBe("Queued");

    for (const payload of [{ dateFrom: today }, { dateTo: today }, {}, { dateFrom: today, dateTo: "yesterday" }]) {
      const res = await cancel(who.apiKey, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
    }
    const backwards = await cancel(who.apiKey, { dateFrom: today, dateTo: dayBefore(1) });
    expect(backwards.statusCode).toBe(400);
    expect(await statusOf(who, id)).toBe("Queued");

    const admin = await person(who, ["account.admin", "traffic-sources.delete"]);
    expect((await cancel(admin, range)).json().data).toEqual({ cancelled: 1 });
    expect(await statusOf(who, id)).toBe("Cancelled");
  });
});

describe("deleting events", () => {
  it("DELETE events/{id} removes the event and its attempts", async () => {
    const who = await tenant();
    const other = await tenant();
    const p = path("delete-one");
    await createHook(who, { url: withId(p) });
    await createHook(other, { url: withId(path("delete-theirs")) });
    const { id } = await eventOf(who, await convert(who));
    const theirs = (await eventOf(other, await convert(other))).id;
    await tick();
    expect(await attemptsOf(who, id)).toHaveLength(1);

    const res = await deleteOne(who.apiKey, id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ id, deleted: true });
    const gone = await t.call({ method: "GET", url: `${BASE}/events/${id}`, headers: auth(who.apiKey) });
    expect(gone.statusCode).toBe(404);
    const goneAttempts = await t.call({
      method: "GET",
      url: `${BASE}/events/${id}/attempts`,
      headers: auth(who.apiKey),
    });
    expect(goneAttempts.statusCode).toBe(404);
    expect(await attemptRows([id])).toBe(0);
    expect(await listEvents(who)).toEqual([]);

    // Again, unknown, or another tenant's: 404, and theirs survives with its attempt.
    for (const target of [id, "evt_does_not_exist", theirs]) {
      expect((await deleteOne(who.apiKey, target)).statusCode, target).toBe(404);
    }
    expect(await statusOf(other, theirs)).toBe("Delivered");
    expect(await attemptRows([theirs])).toBe(1);
  });

  it("POST events/delete removes every event of the range (any status) with its attempts, optionally one webhook's", async () => {
    const who = await tenant();
    const other = await tenant();
    const pDown = path("down");
    rx.on(pDown, { status: 500 });
    const h1 = await createHook(who, { url: withId(path("ok")) });
    const h2 = await createHook(who, { url: withId(pDown) });
    await createHook(other, { url: withId(path("theirs")) });
    const [day1, day2, day3] = [dayBefore(4), dayBefore(3), dayBefore(2)];
    const a = await convertAt(who, `${day1}T23:59:59.999Z`);
    const b = await convertAt(who, `${day2}T00:00:00.000Z`);
    const theirs = await convertAt(other, `${day2}T06:00:00.000Z`);
    expect(await tick()).toBe(5);
    const c = await convertAt(who, `${day2}T23:59:59.999Z`);
    const d = await convertAt(who, `${day3}T00:00:00.000Z`);
    t.clock.set(START);

    const b1 = await eventOf(who, b, h1.id);
    const b2 = await eventOf(who, b, h2.id);
    const c2 = await eventOf(who, c, h2.id);
    expect([b1.status, b2.status, c2.status]).toEqual(["Delivered", "Retrying", "Queued"]);

    // One webhook's first: b2 and c2.
    const narrowed = await deleteRange(who.apiKey, { webhookId: h2.id, dateFrom: day2, dateTo: day2 });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json().data).toEqual({ deleted: 2 });
    for (const id of [b2.id, c2.id]) {
      const res = await t.call({ method: "GET", url: `${BASE}/events/${id}`, headers: auth(who.apiKey) });
      expect(res.statusCode).toBe(404);
    }
    expect(await attemptRows([b2.id])).toBe(0);
    expect(await statusOf(who, b1.id)).toBe("Delivered");

    // Then the whole day: b1 (Delivered, with its attempt) and c1.
    const all = await deleteRange(who.apiKey, { dateFrom: day2, dateTo: day2 });
    expect(all.json().data).toEqual({ deleted: 2 });
    expect(await attemptRows([b1.id])).toBe(0);
    const left = await listEvents(who);
    expect(left.map((e) => e.conversionId).sort()).toEqual([a, a, d, d].sort());
    expect((await listEvents(other)).map((e) => e.conversionId)).toEqual([theirs]);
    expect((await deleteRange(who.apiKey, { dateFrom: day2, dateTo: day2 })).json().data).toEqual({ deleted: 0 });
  });

  it("deleting an event while its attempt is in flight leaves nothing behind, and the tick completes", async () => {
    const who = await tenant();
    const p = path("in-flight");
    rx.on(p, "hang");
    await createHook(who, { url: withId(p) });
    const { id } = await eventOf(who, await convert(who));
    const ticking = tick();
    await rx.waitFor(p, 5_000);
    expect((await deleteOne(who.apiKey, id)).statusCode).toBe(200);
    expect(await ticking).toBe(1);
    expect(await attemptRows([id])).toBe(0);
    expect(await listEvents(who)).toEqual([]);
    t.clock.advance(2 * HOUR);
    expect(await tick()).toBe(0);
  });

  it("both need traffic-sources.delete on top of account.admin; missing dates are 400", async () => {
    const who = await tenant();
    await createHook(who, { url: withId(path("delete-auth")) });
    const { id } = await eventOf(who, await convert(who));
    const today = START.toISOString().slice(0, 10);
    const range = { dateFrom: today, dateTo: today };
    const deleterOnly = await person(who, ["traffic-sources.delete"]);
    const plainKey = await seedTenancy(t);

    for (const authorization of [who.bearer, deleterOnly]) {
      expect((await deleteOne(authorization, id)).statusCode).toBe(403);
      expect((await deleteRange(authorization, range)).statusCode).toBe(403);
    }
    expect((await deleteRange(plainKey.apiKey, range)).statusCode).toBe(403);
    expect((await t.call({ method: "DELETE", url: `${BASE}/events/${id}` })).statusCode).toBe(401);
    expect((await t.call({ method: "POST", url: `${BASE}/events/delete`, payload: range })).statusCode).toBe(401);
    for (const payload of [{ dateFrom: today }, { dateTo: today }, { webhookId: "x" }]) {
      expect((await deleteRange(who.apiKey, payload)).statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect(await statusOf(who, id)).toBe("Queued");

    const admin = await person(who, ["account.admin", "traffic-sources.delete"]);
    expect((await deleteRange(admin, range)).json().data).toEqual({ deleted: 1 });
    expect(await listEvents(who)).toEqual([]);
  });
});

describe("POST settings/{id}/simulate", () => {
  const SIMULATE_QUERY = SIMULATE_ONLY.map((name) => `${name}=\${${name}}`).join("&");

  it("answers 202 'Request sent'; the tick sends the sample with every simulate-only placeholder filled", async () => {
    const who = await tenant();
    const p = path("simulate");
    const template = `${rx.base}${p}?${SIMULATE_QUERY}&type=\${conversionType}&event=\${eventName}&click=\${clickId}`;
    const hook = await createHook(who, { url: template, method: "POST" });

    const res = await simulate(who.apiKey, hook.id);
    expect(res.statusCode, res.body).toBe(202);
    expect(res.json().message).toBe("Request sent");
    expect(Object.keys(res.json().data)).toEqual(["eventId"]);
    const { eventId } = res.json().data;
    expect(typeof eventId).toBe("string");
    expect(rx.at(p)).toEqual([]);

    const [event] = await listEvents(who, `?webhookId=${hook.id}`);
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
    expect(received?.query.get("click")).toBe(SAMPLE_VALUES.clickId);
    expect(received?.headers["content-type"]).toBe("application/json");

    const body = JSON.parse(received?.body ?? "null");
    expect(Object.keys(body).sort()).toEqual([
      "account",
      "attribution",
      "brand",
      "clickDate",
      "clickId",
      "conversionId",
      "conversionType",
      "currency",
      "eventName",
      "eventTime",
      "eventValue",
      "pageViews",
      "program",
      "trafficSource",
    ]);
    expect(body).toMatchObject({
      conversionType: "Deposit",
      eventName: "Deposit",
      eventValue: Number(SAMPLE_VALUES.eventValue),
      currency: SAMPLE_VALUES.currencyCode,
      eventTime: START.toISOString(),
      clickId: SAMPLE_VALUES.clickId,
      account: { id: Number(SAMPLE_VALUES.accountId), name: SAMPLE_VALUES.account },
      brand: { id: Number(SAMPLE_VALUES.brandId), name: SAMPLE_VALUES.brand },
      program: { id: Number(SAMPLE_VALUES.programId), name: SAMPLE_VALUES.program },
      trafficSource: { id: Number(SAMPLE_VALUES.trafficSourceId), name: SAMPLE_VALUES.trafficSource },
      attribution: {
        gclid: SAMPLE_VALUES.gclid,
        fbclid: SAMPLE_VALUES.fbclid,
        parameterA: SAMPLE_VALUES.parameterA,
        parameterB: SAMPLE_VALUES.parameterB,
        externalClickId: SAMPLE_VALUES.externalClickId,
      },
    });
    expect(typeof body.conversionId).toBe("string");
    expect(Date.parse(body.clickDate)).toBeLessThan(START.getTime());
    expect(body.pageViews).toHaveLength(1);
    expect(body.pageViews[0]).toMatchObject({ url: SAMPLE_VALUES.location, title: SAMPLE_VALUES.documentTitle });

    // The outcome shows in the webhook's delivery log, marked simulated, with its attempt.
    const [delivered] = await listEvents(who, `?webhookId=${hook.id}`);
    expect(delivered).toMatchObject({ id: eventId, simulated: true, status: "Delivered", attempts: 1 });
    const attempts = await attemptsOf(who, eventId);
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
    const hook = await createHook(who, {
      url: `${rx.base}${p}?type=\${conversionType}&event=\${eventName}`,
      conversionTypes: ["FirstTimeDeposit", "Signup"],
      eventNames: { Signup: "sign_up" },
    });
    expect((await simulate(who.apiKey, hook.id, {})).statusCode).toBe(202);
    expect((await simulate(who.apiKey, hook.id, { conversionType: "Signup" })).statusCode).toBe(202);
    expect(await tick()).toBe(2);
    const got = rx
      .at(p)
      .map((r) => `${r.query.get("type")}/${r.query.get("event")}`)
      .sort();
    expect(got).toEqual(["FirstTimeDeposit/FirstTimeDeposit", "Signup/sign_up"]);
    const events = await listEvents(who, `?webhookId=${hook.id}`);
    expect(events.map((e) => [e.simulated, e.status])).toEqual([
      [true, "Delivered"],
      [true, "Delivered"],
    ]);
  });

  // API.md: `POST settings/{id}/simulate` `{ conversionType? }`; the route declares its body optional.
  it("accepts a request with no body at all", async () => {
    const who = await tenant();
    const p = path("no-body");
    const hook = await createHook(who, { url: `${rx.base}${p}?type=\${conversionType}` });
    const res = await simulate(who.apiKey, hook.id, null);
    expect(res.statusCode, res.body).toBe(202);
    expect(await tick()).toBe(1);
    expect(rx.at(p).map((r) => r.query.get("type"))).toEqual(["Deposit"]);
  });

  it("refuses commission types and unknown types with 400, creating no event", async () => {
    const who = await tenant();
    const hook = await createHook(who, { url: withId(path("commission")) });
    for (const conversionType of ["CpaCommission", "RevShareCommission", "FlatFeeCommission", "Purchase"]) {
      const res = await simulate(who.apiKey, hook.id, { conversionType });
      expect(res.statusCode, `${conversionType}: ${res.body}`).toBe(400);
      expect(res.json().message).toContain("conversionType");
    }
    expect(await listEvents(who, `?webhookId=${hook.id}`)).toEqual([]);
  });

  it("simulates Click only while the tenant's clickWebhooks entitlement is on", async () => {
    const who = await tenant();
    const p = path("click");
    const hook = await createHook(who, { url: `${rx.base}${p}?type=\${conversionType}` });
    const setClickWebhooks = async (on: boolean) => {
      const res = await t.call({
        method: "PATCH",
        url: `/api/admin/tenants/${who.tenantId}`,
        headers: auth(`Bearer ${ADMIN_KEY}`),
        payload: { entitlements: { clickWebhooks: on } },
      });
      expect(res.statusCode, res.body).toBe(200);
    };

    const refused = await simulate(who.apiKey, hook.id, { conversionType: "Click" });
    expect(refused.statusCode, refused.body).toBe(400);
    expect(await listEvents(who, `?webhookId=${hook.id}`)).toEqual([]);

    await setClickWebhooks(true);
    const accepted = await simulate(who.bearer, hook.id, { conversionType: "Click" });
    expect(accepted.statusCode, accepted.body).toBe(202);
    expect(await tick()).toBe(1);
    expect(rx.at(p).map((r) => r.query.get("type"))).toEqual(["Click"]);
    expect(await getEvent(who, accepted.json().data.eventId)).toMatchObject({
      conversionType: "Click",
      simulated: true,
      status: "Delivered",
    });

    await setClickWebhooks(false);
    expect((await simulate(who.bearer, hook.id, { conversionType: "Click" })).statusCode).toBe(400);
  });

  it("a live conversion renders the simulate-only placeholders empty and is not marked simulated", async () => {
    const who = await tenant();
    const p = path("live");
    const hook = await createHook(who, { url: `${rx.base}${p}?${SIMULATE_QUERY}&c=\${conversionId}` });
    const conversion = await convert(who, { type: "Deposit", value: 10, currency: "EUR" });
    const simulated = (await simulate(who.apiKey, hook.id)).json().data.eventId;
    expect(await tick()).toBe(2);

    const live = rx.at(p).find((r) => r.query.get("c") === conversion);
    const sample = rx.at(p).find((r) => r.query.get("c") !== conversion);
    for (const name of SIMULATE_ONLY) {
      expect(live?.query.get(name), name).toBe("");
      expect(sample?.query.get(name), name).toBe(SAMPLE_VALUES[name]);
    }
    const events = await listEvents(who, `?webhookId=${hook.id}`);
    expect(events.find((e) => e.conversionId === conversion)?.simulated).toBe(false);
    expect(events.find((e) => e.id === simulated)?.simulated).toBe(true);
  });

  it("answers 404 for an unknown webhook and another tenant's, 401 without a credential, 403 without account.admin", async () => {
    const who = await tenant();
    const other = await tenant();
    const theirs = await createHook(other, { url: withId(path("theirs")) });
    const mine = await createHook(who, { url: withId(path("mine")) });

    for (const id of ["whk_does_not_exist", theirs.id]) {
      const res = await simulate(who.apiKey, id);
      expect(res.statusCode, res.body).toBe(404);
    }
    expect(await listEvents(other)).toEqual([]);
    const anonymous = await t.call({ method: "POST", url: `${BASE}/settings/${mine.id}/simulate` });
    expect(anonymous.statusCode).toBe(401);
    const notAdmin = await person(who, ["webhooks.read", "webhooks.update", "traffic-sources.delete"]);
    expect((await simulate(notAdmin, mine.id)).statusCode).toBe(403);
    expect(await listEvents(who)).toEqual([]);
    expect(await tick()).toBe(0);
  });
});
