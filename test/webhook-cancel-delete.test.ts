/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { beforeAll, describe, expect, it } from "vitest";
import { HOUR_MS } from "../src/platform/durations.js";
import { seedTenancy, type TestApp } from "./helpers/app.js";
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
  receiverPaths,
  suspendHook,
  WEBHOOKS_API,
  withId,
} from "./helpers/webhooks.js";

// Cancelling and deleting outgoing conversion webhook events, one or a range
// (docs/outgoing-webhooks.md), and who may, against a real loopback receiver.

let t: TestApp;
let rx: Receiver;
/** The instant every test starts at. */
let START: Date;
const {
  tick,
  auth,
  tenant,
  person,
  statusOf,
  attemptRows,
  cancel,
  deleteRange,
  deleteOne,
  dayBefore,
  convertAt,
  app,
  receiver,
  started,
} = operationsHarness();
beforeAll(() => {
  t = app();
  rx = receiver();
  START = started();
});
const path = receiverPaths("/ops");

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
