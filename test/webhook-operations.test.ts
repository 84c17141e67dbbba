/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { SAMPLE_VALUES } from "../src/features/outgoing-webhooks/placeholders.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  attemptsOf,
  cancelWaitingEvents,
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
  signInPerson,
  simulate,
  startWebhookTestApp,
  suspendHook,
  WEBHOOKS_API,
  withId,
} from "./helpers/webhooks.js";

// Operations on outgoing conversion webhook events (docs/outgoing-webhooks.md): resend, cancel a
// range, delete one or a range, and Simulate, against a real loopback receiver, with the delivery
// worker ticked by hand.

let t: TestApp;
let rx: Receiver;
/** The instant every test starts at: tests move the clock, afterEach puts it back. */
let START: Date;

beforeAll(async () => {
  t = await startWebhookTestApp();
  rx = await startReceiver();
  START = t.clock.now();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
afterEach(async () => {
  await cancelWaitingEvents(t);
  t.clock.set(START);
});

const path = receiverPaths("/ops");
const tick = () => t.ctx.delivery.tick();
const auth = (authorization: string) => ({ authorization });

/** A tenant whose person is account.admin only and whose key also carries traffic-sources.delete. */
const tenant = () => seedTenancy(t, { key: { scopes: ["traffic-sources.delete"] } });

/** Another signed-in person on the tenant, with exactly these permissions; returns the bearer header. */
const person = async (who: Tenancy, permissions: string[]) =>
  (await signInPerson(t, who.tenantId, { name: "Ops person", permissions })).bearer;

const statusOf = async (who: Tenancy, id: string) => (await getEvent(t, who, id)).status;

/** Attempt rows in the table, whatever the API still shows. */
async function attemptRows(eventIds: string[]): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: string | number }>(
    "select count(*) as n from webhook_attempts where event_id = any($1::text[])",
    [eventIds],
  );
  return Number(row?.n);
}

const cancel = (authorization: string, payload: Record<string, unknown>) =>
  t.call({ method: "POST", url: `${WEBHOOKS_API}/events/cancel`, headers: auth(authorization), payload });
const deleteRange = (authorization: string, payload: Record<string, unknown>) =>
  t.call({ method: "POST", url: `${WEBHOOKS_API}/events/delete`, headers: auth(authorization), payload });
const deleteOne = (authorization: string, id: string) =>
  t.call({ method: "DELETE", url: `${WEBHOOKS_API}/events/${id}`, headers: auth(authorization) });

/** `YYYY-MM-DD` of the UTC day `n` days before START's. */
function dayBefore(n: number): string {
  return new Date(START.getTime() - n * DAY_MS).toISOString().slice(0, 10);
}

/** Records a conversion at `at` (the clock moved there) and returns its id. */
async function convertAt(who: Tenancy, at: string): Promise<string> {
  t.clock.set(at);
  return convert(t, who);
}

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

describe("POST events/cancel", () => {
  it("cancels the waiting events created in the range (whole UTC days, both ends), never Delivered ones", async () => {
    const who = await tenant();
    const [pOk, pDown] = [path("ok"), path("down")];
    rx.on(pDown, { status: 503 });
    const ok = await createHook(t, who, { url: withId(rx, pOk) });
    const down = await createHook(t, who, { url: withId(rx, pDown) });
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
    await suspendHook(t, down.id);
    const d = await convertAt(who, `${day3}T23:59:59.999Z`);
    // After the range: one Queued, one Paused.
    const e = await convertAt(who, `${day4}T00:00:00.000Z`);

    const ev = async (conversion: string, hookId: string) => (await eventOf(t, who, conversion, hookId)).id;
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
    expect((await getEvent(t, who, ids.b2)).nextAttemptAt).toBeNull();
    expect(await attemptsOf(t, who, ids.b1)).toHaveLength(1);

    // Days later: only what is still waiting is claimed (a2's retry, paused on the suspended
    // webhook, and e1); nothing cancelled is.
    expect(await tick()).toBe(2);
    expect(conversionsAt(rx, pOk)).toEqual([a, b, e]);
    expect(conversionsAt(rx, pDown)).toEqual([a, b]);
    expect(await statusOf(who, ids.a2)).toBe("Paused");
    expect(await attemptsOf(t, who, ids.b2)).toHaveLength(1);
    // Re-enabling the webhook sends nothing cancelled either.
    await enableHook(t, who, down.id);
    for (let round = 0; round < 3; round += 1) {
      t.clock.advance(2 * HOUR_MS);
      await tick();
    }
    expect(conversionsAt(rx, pDown).filter((x) => x === b)).toHaveLength(1);
    expect(conversionsAt(rx, pDown)).not.toContain(c);
    expect(conversionsAt(rx, pDown)).not.toContain(d);
    expect(conversionsAt(rx, pOk)).toEqual([a, b, e]);
    // The same range again: nothing left to cancel.
    expect((await cancel(who.apiKey, { dateFrom: day2, dateTo: day3 })).json().data).toEqual({ cancelled: 0 });
  });

  // Paused means the webhook is suspended; such events are sent when it is re-enabled. Cancel must
  // stop exactly those in the range.
  it("a cancelled Paused event stays unsent when its webhook is re-enabled; a Paused one outside the range goes out", async () => {
    const who = await tenant();
    const p = path("paused");
    const hook = await createHook(t, who, { url: withId(rx, p) });
    await suspendHook(t, hook.id);
    const inRange = await convertAt(who, `${dayBefore(3)}T12:00:00.000Z`);
    const outside = await convertAt(who, `${dayBefore(1)}T12:00:00.000Z`);
    t.clock.set(START);
    const range = { dateFrom: dayBefore(3), dateTo: dayBefore(3) };
    expect((await cancel(who.apiKey, range)).json().data).toEqual({ cancelled: 1 });
    expect(await statusOf(who, (await eventOf(t, who, inRange)).id)).toBe("Cancelled");
    expect(await statusOf(who, (await eventOf(t, who, outside)).id)).toBe("Paused");

    await enableHook(t, who, hook.id);
    await tick();
    t.clock.advance(2 * HOUR_MS);
    await tick();
    expect(conversionsAt(rx, p)).toEqual([outside]);
    expect(await statusOf(who, (await eventOf(t, who, outside)).id)).toBe("Delivered");
    expect(await statusOf(who, (await eventOf(t, who, inRange)).id)).toBe("Cancelled");
  });

  it("takes date-times with offsets (inclusive) and narrows to one webhook's events with webhookId", async () => {
    const who = await tenant();
    const other = await tenant();
    const h1 = await createHook(t, who, { url: withId(rx, path("h1")) });
    const h2 = await createHook(t, who, { url: withId(rx, path("h2")) });
    const theirs = await createHook(t, other, { url: withId(rx, path("theirs")) });
    const day = dayBefore(3);
    const early = await convertAt(who, `${day}T09:59:59.999Z`);
    const onTime = await convertAt(who, `${day}T10:00:00.000Z`);
    const theirEvent = (await eventOf(t, other, await convertAt(other, `${day}T10:00:00.000Z`))).id;
    t.clock.set(START);

    // 12:00 at +02:00 is 10:00Z: both bounds on that instant take exactly the events created then.
    const instant = { dateFrom: `${day}T12:00:00+02:00`, dateTo: `${day}T12:00:00+02:00` };
    const narrowed = await cancel(who.apiKey, { ...instant, webhookId: h1.id });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json().data).toEqual({ cancelled: 1 });
    expect(await statusOf(who, (await eventOf(t, who, onTime, h1.id)).id)).toBe("Cancelled");
    expect(await statusOf(who, (await eventOf(t, who, onTime, h2.id)).id)).toBe("Queued");
    expect(await statusOf(who, (await eventOf(t, who, early, h1.id)).id)).toBe("Queued");

    // Another tenant's webhook id is not found in ours (404), and their events are never touched.
    expect((await cancel(who.apiKey, { ...instant, webhookId: theirs.id })).statusCode).toBe(404);
    expect((await cancel(who.apiKey, instant)).json().data).toEqual({ cancelled: 1 });
    expect(await statusOf(who, (await eventOf(t, who, onTime, h2.id)).id)).toBe("Cancelled");
    expect(await statusOf(other, theirEvent)).toBe("Queued");
    expect(await statusOf(who, (await eventOf(t, who, early, h2.id)).id)).toBe("Queued");
  });

  it("stops an event whose attempt is in flight: the attempt's outcome does not overwrite Cancelled", async () => {
    const who = await tenant();
    const p = path("slow");
    rx.on(p, [{ status: 500 }]);
    await createHook(t, who, { url: `${rx.base}${p}?c=\${conversionId}` });
    const conversion = await convert(t, who);
    const { id } = await eventOf(t, who, conversion);
    rx.on(p, "hang");
    const ticking = tick();
    await rx.waitFor(p, 5_000);
    const today = START.toISOString().slice(0, 10);
    expect((await cancel(who.apiKey, { dateFrom: today, dateTo: today })).json().data).toEqual({ cancelled: 1 });
    expect(await ticking).toBe(1);
    const after = await getEvent(t, who, id);
    expect(after).toMatchObject({ status: "Cancelled", nextAttemptAt: null });
    // The attempt itself is logged; nothing follows it.
    expect((await attemptsOf(t, who, id)).map((a) => a.errorType)).toEqual(["timeout"]);
    t.clock.advance(2 * HOUR_MS);
    expect(await tick()).toBe(0);
  });

  it("needs traffic-sources.delete on top of account.admin, and both dates", async () => {
    const who = await tenant();
    await createHook(t, who, { url: withId(rx, path("cancel-auth")) });
    const { id } = await eventOf(t, who, await convert(t, who));
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
    expect((await t.call({ method: "POST", url: `${WEBHOOKS_API}/events/cancel`, payload: range })).statusCode).toBe(
      401,
    );
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

// Ids are looked up inside the caller's tenant: another tenant's id is a 404.
describe("bulk cancel and delete narrowed to a webhook id the tenant does not have", () => {
  it("answer 404 naming the webhook id, for an unknown id and another tenant's, and change nothing", async () => {
    const who = await tenant();
    const other = await tenant();
    const mine = await createHook(t, who, { url: withId(rx, path("bulk-404-mine")) });
    const theirs = await createHook(t, other, { url: withId(rx, path("bulk-404-theirs")) });
    const mineEvent = (await eventOf(t, who, await convert(t, who))).id;
    const theirEvent = (await eventOf(t, other, await convert(t, other))).id;
    const today = START.toISOString().slice(0, 10);

    for (const webhookId of ["wh_does_not_exist", theirs.id]) {
      for (const [name, send] of [
        ["cancel", cancel],
        ["delete", deleteRange],
      ] as const) {
        const res = await send(who.apiKey, { webhookId, dateFrom: today, dateTo: today });
        expect(res.statusCode, `${name} ${webhookId}: ${res.body}`).toBe(404);
        expect(res.json().code).toBe("not_found");
        expect(res.json().message).toContain(webhookId);
      }
    }
    expect(await statusOf(who, mineEvent)).toBe("Queued");
    expect(await statusOf(other, theirEvent)).toBe("Queued");

    // The tenant's own webhook id still narrows as before.
    const narrowed = await cancel(who.apiKey, { webhookId: mine.id, dateFrom: today, dateTo: today });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json().data).toEqual({ cancelled: 1 });
    const deleted = await deleteRange(who.apiKey, { webhookId: mine.id, dateFrom: today, dateTo: today });
    expect(deleted.json().data).toEqual({ deleted: 1 });
    expect(await statusOf(other, theirEvent)).toBe("Queued");
  });
});

describe("deleting events", () => {
  it("DELETE events/{id} removes the event and its attempts", async () => {
    const who = await tenant();
    const other = await tenant();
    const p = path("delete-one");
    await createHook(t, who, { url: withId(rx, p) });
    await createHook(t, other, { url: withId(rx, path("delete-theirs")) });
    const { id } = await eventOf(t, who, await convert(t, who));
    const theirs = (await eventOf(t, other, await convert(t, other))).id;
    await tick();
    expect(await attemptsOf(t, who, id)).toHaveLength(1);

    const res = await deleteOne(who.apiKey, id);
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toEqual({ id, deleted: true });
    const gone = await t.call({ method: "GET", url: `${WEBHOOKS_API}/events/${id}`, headers: auth(who.apiKey) });
    expect(gone.statusCode).toBe(404);
    const goneAttempts = await t.call({
      method: "GET",
      url: `${WEBHOOKS_API}/events/${id}/attempts`,
      headers: auth(who.apiKey),
    });
    expect(goneAttempts.statusCode).toBe(404);
    expect(await attemptRows([id])).toBe(0);
    expect(await listEvents(t, who)).toEqual([]);

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
    const h1 = await createHook(t, who, { url: withId(rx, path("ok")) });
    const h2 = await createHook(t, who, { url: withId(rx, pDown) });
    await createHook(t, other, { url: withId(rx, path("theirs")) });
    const [day1, day2, day3] = [dayBefore(4), dayBefore(3), dayBefore(2)];
    const a = await convertAt(who, `${day1}T23:59:59.999Z`);
    const b = await convertAt(who, `${day2}T00:00:00.000Z`);
    const theirs = await convertAt(other, `${day2}T06:00:00.000Z`);
    expect(await tick()).toBe(5);
    const c = await convertAt(who, `${day2}T23:59:59.999Z`);
    const d = await convertAt(who, `${day3}T00:00:00.000Z`);
    t.clock.set(START);

    const b1 = await eventOf(t, who, b, h1.id);
    const b2 = await eventOf(t, who, b, h2.id);
    const c2 = await eventOf(t, who, c, h2.id);
    expect([b1.status, b2.status, c2.status]).toEqual(["Delivered", "Retrying", "Queued"]);

    // One webhook's first: b2 and c2.
    const narrowed = await deleteRange(who.apiKey, { webhookId: h2.id, dateFrom: day2, dateTo: day2 });
    expect(narrowed.statusCode, narrowed.body).toBe(200);
    expect(narrowed.json().data).toEqual({ deleted: 2 });
    for (const id of [b2.id, c2.id]) {
      const res = await t.call({ method: "GET", url: `${WEBHOOKS_API}/events/${id}`, headers: auth(who.apiKey) });
      expect(res.statusCode).toBe(404);
    }
    expect(await attemptRows([b2.id])).toBe(0);
    expect(await statusOf(who, b1.id)).toBe("Delivered");

    // Then the whole day: b1 (Delivered, with its attempt) and c1.
    const all = await deleteRange(who.apiKey, { dateFrom: day2, dateTo: day2 });
    expect(all.json().data).toEqual({ deleted: 2 });
    expect(await attemptRows([b1.id])).toBe(0);
    const left = await listEvents(t, who);
    expect(left.map((e) => e.conversionId).sort()).toEqual([a, a, d, d].sort());
    expect((await listEvents(t, other)).map((e) => e.conversionId)).toEqual([theirs]);
    expect((await deleteRange(who.apiKey, { dateFrom: day2, dateTo: day2 })).json().data).toEqual({ deleted: 0 });
  });

  it("deleting an event while its attempt is in flight leaves nothing behind, and the tick completes", async () => {
    const who = await tenant();
    const p = path("in-flight");
    rx.on(p, "hang");
    await createHook(t, who, { url: withId(rx, p) });
    const { id } = await eventOf(t, who, await convert(t, who));
    const ticking = tick();
    await rx.waitFor(p, 5_000);
    expect((await deleteOne(who.apiKey, id)).statusCode).toBe(200);
    expect(await ticking).toBe(1);
    expect(await attemptRows([id])).toBe(0);
    expect(await listEvents(t, who)).toEqual([]);
    t.clock.advance(2 * HOUR_MS);
    expect(await tick()).toBe(0);
  });

  it("both need traffic-sources.delete on top of account.admin; missing dates are 400", async () => {
    const who = await tenant();
    await createHook(t, who, { url: withId(rx, path("delete-auth")) });
    const { id } = await eventOf(t, who, await convert(t, who));
    const today = START.toISOString().slice(0, 10);
    const range = { dateFrom: today, dateTo: today };
    const deleterOnly = await person(who, ["traffic-sources.delete"]);
    const plainKey = await seedTenancy(t);

    for (const authorization of [who.bearer, deleterOnly]) {
      expect((await deleteOne(authorization, id)).statusCode).toBe(403);
      expect((await deleteRange(authorization, range)).statusCode).toBe(403);
    }
    expect((await deleteRange(plainKey.apiKey, range)).statusCode).toBe(403);
    expect((await t.call({ method: "DELETE", url: `${WEBHOOKS_API}/events/${id}` })).statusCode).toBe(401);
    expect((await t.call({ method: "POST", url: `${WEBHOOKS_API}/events/delete`, payload: range })).statusCode).toBe(
      401,
    );
    for (const payload of [{ dateFrom: today }, { dateTo: today }, { webhookId: "x" }]) {
      expect((await deleteRange(who.apiKey, payload)).statusCode, JSON.stringify(payload)).toBe(400);
    }
    expect(await statusOf(who, id)).toBe("Queued");

    const admin = await person(who, ["account.admin", "traffic-sources.delete"]);
    expect((await deleteRange(admin, range)).json().data).toEqual({ deleted: 1 });
    expect(await listEvents(t, who)).toEqual([]);
  });
});

// A missing permission is a 403 before any lookup, and the body is validated
// after the permissions: a caller lacking either permission is refused the same way whatever it sends.
describe("permissions of the destructive event routes come before the body and any lookup", () => {
  it("cancel, range delete and single delete are 403 for a caller without account.admin, even with a bad body", async () => {
    const who = await tenant();
    await createHook(t, who, { url: withId(rx, path("perm-order")) });
    const { id } = await eventOf(t, who, await convert(t, who));
    const deleterOnly = await person(who, ["traffic-sources.delete", "webhooks.read", "webhooks.update"]);
    const today = START.toISOString().slice(0, 10);

    for (const authorization of [deleterOnly, who.bearer]) {
      for (const payload of [{}, { bogus: true }, { dateFrom: "yesterday" }, { dateFrom: today, dateTo: today }]) {
        for (const [name, send] of [
          ["cancel", cancel],
          ["delete", deleteRange],
        ] as const) {
          const res = await send(authorization, payload);
          expect(res.statusCode, `${name} ${JSON.stringify(payload)}: ${res.body}`).toBe(403);
          expect(res.json().code).toBe("forbidden");
        }
      }
      for (const target of [id, "evt_does_not_exist"]) {
        const res = await deleteOne(authorization, target);
        expect(res.statusCode, `${target}: ${res.body}`).toBe(403);
      }
    }
    const bad = await cancel(deleterOnly, { bogus: true });
    expect(bad.json().message).toContain("account.admin");
    expect(await statusOf(who, id)).toBe("Queued");

    // With both permissions the same bad body is a 400.
    expect((await cancel(who.apiKey, { bogus: true })).statusCode).toBe(400);
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
