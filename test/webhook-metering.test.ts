/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryEvent as Event } from "../src/features/outgoing-webhooks/event-service.js";
import { HOUR_MS } from "../src/platform/durations.js";
import { ADMIN_KEY, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  cancelWaitingEvents,
  conversionsAt,
  createHook,
  eventOf,
  issuesOf,
  listEvents,
  receiverPaths,
  resend,
  signInPerson,
  simulateEvent,
  startWebhookTestApp,
  withId,
} from "./helpers/webhooks.js";

// Metering of outgoing webhook deliveries (docs/outgoing-webhooks.md: the allowance is per calendar
// month (UTC), an event is sent while the month's sent count is below 110% of the allowance,
// otherwise it is Held; an event counts once, at its first attempt; retries, resends and simulated
// events do not count again; issue `webhook_allowance_exceeded`; admin surface: `webhookAllowance`,
// null unlimited). Tenants are made through the admin API; the worker is ticked by hand; the clock
// is the app's.

const ADMIN = { authorization: `Bearer ${ADMIN_KEY}` };
/** Mid-month, so a couple of hours never reach the next month. */
const START = new Date("2026-11-20T10:00:00.000Z");
const RECHECK_MS = 2 * HOUR_MS;

interface Metered {
  tenantId: string;
  name: string;
  email: string;
  apiKey: string;
}

let t: TestApp;
let rx: Receiver;
let counter = 0;

beforeAll(async () => {
  t = await startWebhookTestApp({ env: { WEBHOOK_RETRY_INTERVAL_S: "3600" } });
  t.clock.set(START);
  rx = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
// Held events are cancelled too: they fall due when a later test moves the clock.
afterEach(async () => {
  await cancelWaitingEvents(t, { statuses: ["Queued", "Retrying", "Held", "Paused"] });
  t.clock.set(START);
});

const path = receiverPaths("/meter");
const tick = () => t.ctx.delivery.tick();

/** A tenant made through the admin API with this allowance, an account-admin person and an API key. */
async function meteredTenant(webhookAllowance: number | null): Promise<Metered> {
  counter += 1;
  const name = `Metered ${counter}`;
  const created = await t.call({
    method: "POST",
    url: "/api/admin/tenants",
    headers: ADMIN,
    payload: { name, webhookAllowance },
  });
  expect(created.statusCode, created.body).toBe(201);
  expect(created.json().data.webhookAllowance).toBe(webhookAllowance);
  const tenantId: string = created.json().data.id;
  const { email, bearer } = await signInPerson(t, tenantId, {
    name: `Person ${counter}`,
    permissions: ["account.admin"],
  });
  const key = await t.call({
    method: "POST",
    url: "/api/v1/api-tokens",
    headers: { authorization: bearer },
    payload: { name: `Key ${counter}` },
  });
  expect(key.statusCode, key.body).toBe(201);
  return { tenantId, name, email, apiKey: `ApiKey ${key.json().data.token}` };
}

async function setAllowance(who: Metered, webhookAllowance: number | null): Promise<void> {
  const res = await t.call({
    method: "PATCH",
    url: `/api/admin/tenants/${who.tenantId}`,
    headers: ADMIN,
    payload: { webhookAllowance },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().data.webhookAllowance).toBe(webhookAllowance);
}

/** A webhook sending to `url`; returns its id. */
const hookTo = async (who: Metered, url: string) => (await createHook(t, who, { url })).id;

/** Records `n` Signup conversions in one batch; returns their ids. */
async function convertMany(who: Metered, n: number): Promise<string[]> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: who.apiKey },
    payload: { items: Array.from({ length: n }, () => ({ type: "Signup" })) },
  });
  expect(res.statusCode, res.body).toBe(201);
  const ids = res.json().data.items.map((i: { id: string }) => i.id);
  expect(ids).toHaveLength(n);
  return ids;
}

async function convert(who: Metered): Promise<string> {
  const [id] = await convertMany(who, 1);
  return id as string;
}

/** A page big enough for every event a test here makes; `query` goes on with `&`. */
const listAll = (who: Metered, query = "") => listEvents(t, who, `?limit=500${query}`);

/** How many of the tenant's events are in each status. */
async function statusCounts(who: Metered): Promise<Record<string, number>> {
  const counts: Record<string, number> = {};
  for (const e of await listAll(who)) counts[e.status] = (counts[e.status] ?? 0) + 1;
  return counts;
}

/** When the Held events are checked again, as stored (distinct values). */
async function heldRecheckTimes(who: Metered): Promise<string[]> {
  const rows = await t.ctx.db.query<{ next_attempt_at: Date }>(
    "select distinct next_attempt_at from webhook_events where tenant_id = $1 and status = 'Held'",
    [who.tenantId],
  );
  return rows.map((r) => new Date(r.next_attempt_at).toISOString());
}

const allowanceIssues = (who: Metered) => issuesOf(t, who, "webhook_allowance_exceeded");

describe("the monthly webhook allowance", () => {
  it("allowance 10: 11 of 15 are sent, 4 Held and rechecked every 2 hours, sent in the next UTC month", async () => {
    const who = await meteredTenant(10);
    const p = path("ten");
    const hook = await hookTo(who, withId(rx, p));
    const ids = await convertMany(who, 15);

    expect(await tick()).toBe(15);
    const sent = conversionsAt(rx, p);
    expect(sent).toHaveLength(11);
    expect(new Set(sent).size).toBe(11);
    for (const id of sent) expect(ids).toContain(id);
    expect(await statusCounts(who)).toEqual({ Delivered: 11, Held: 4 });
    const held = (await listAll(who, "&status=Held")).filter((e) => e.webhookId === hook);
    expect(held).toHaveLength(4);
    for (const event of held) {
      expect(sent).not.toContain(event.conversionId);
      expect(event).toMatchObject({ attempts: 0, lastAttemptAt: null });
    }
    expect(await heldRecheckTimes(who)).toEqual([new Date(START.getTime() + RECHECK_MS).toISOString()]);

    const issues = await allowanceIssues(who);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      kind: "webhook_allowance_exceeded",
      status: "open",
      subject: { type: "tenant", id: who.tenantId },
      details: { allowance: 10 },
    });
    const mails = await t.ctx.db.query<{ subject: string; recipients: string[] }>(
      "select subject, recipients from mail_outbox where tenant_id = $1 and subject like '%allowance%'",
      [who.tenantId],
    );
    expect(mails).toHaveLength(1);
    expect(mails[0]?.recipients).toContain(who.email);

    // Not due before the recheck; at the recheck, still in November: Held again, 2 hours on.
    expect(await tick()).toBe(0);
    t.clock.advance(RECHECK_MS);
    expect(await tick()).toBe(4);
    expect(rx.at(p)).toHaveLength(11);
    expect(await statusCounts(who)).toEqual({ Delivered: 11, Held: 4 });
    expect(await heldRecheckTimes(who)).toEqual([new Date(START.getTime() + 2 * RECHECK_MS).toISOString()]);
    // A new conversion of this month is Held at its first attempt.
    const late = await convert(who);
    expect(await tick()).toBe(1);
    expect((await eventOf(t, who, late)).status).toBe("Held");

    // The last hour of November: still Held.
    t.clock.set("2026-11-30T23:00:00.000Z");
    expect(await tick()).toBe(5);
    expect(rx.at(p)).toHaveLength(11);
    expect(await statusCounts(who)).toEqual({ Delivered: 11, Held: 5 });
    expect((await allowanceIssues(who))[0]?.status).toBe("open");

    // December, but before the recheck falls due: nothing yet. At the recheck: all five go out.
    t.clock.set("2026-12-01T00:30:00.000Z");
    expect(await tick()).toBe(0);
    t.clock.set("2026-12-01T01:00:00.000Z");
    expect(await tick()).toBe(5);
    expect(rx.at(p)).toHaveLength(16);
    expect(new Set(conversionsAt(rx, p))).toEqual(new Set([...ids, late]));
    expect(await statusCounts(who)).toEqual({ Delivered: 16 });
    const [closed] = await allowanceIssues(who);
    expect(closed).toMatchObject({ status: "closed", closedAt: "2026-12-01T01:00:00.000Z" });

    // December's count started from zero: 6 more fit (11 in all), the 12th is Held.
    const december = await convertMany(who, 7);
    expect(await tick()).toBe(7);
    expect(rx.at(p)).toHaveLength(22);
    expect(await statusCounts(who)).toEqual({ Delivered: 22, Held: 1 });
    expect(december).toContain((await listAll(who, "&status=Held"))[0]?.conversionId);
  });

  it("a Held event shows when it is checked again (nextAttemptAt about 2 hours on)", async () => {
    const who = await meteredTenant(0);
    await hookTo(who, withId(rx, path("next-attempt")));
    const id = await convert(who);
    await tick();
    const event = await eventOf(t, who, id);
    expect(event.status).toBe("Held");
    expect(event.nextAttemptAt).toBe(new Date(START.getTime() + RECHECK_MS).toISOString());
  });

  it("counts an event once: its retries, resends and simulated events are not counted", async () => {
    const who = await meteredTenant(2); // below 2.2: three deliveries a month
    const p = path("once");
    rx.on(p, [
      { status: 500, body: "down" },
      { status: 200, body: "ok" },
    ]);
    const hook = await hookTo(who, withId(rx, p));

    // The first attempt fails (counted), the retry succeeds (not counted again).
    const a = await convert(who);
    expect(await tick()).toBe(1);
    expect((await eventOf(t, who, a)).status).toBe("Retrying");
    t.clock.advance(1.2 * HOUR_MS);
    expect(await tick()).toBe(1);
    expect(await eventOf(t, who, a)).toMatchObject({ status: "Delivered", attempts: 2 });

    // Resent twice and simulated three times: all go out, none counted.
    const eventA = await eventOf(t, who, a);
    for (let i = 0; i < 2; i++) {
      expect((await resend(t, who, eventA.id)).statusCode).toBe(200);
      expect(await tick()).toBe(1);
    }
    for (let i = 0; i < 3; i++) await simulateEvent(t, who, hook, null);
    expect(await tick()).toBe(3);
    expect(rx.at(p)).toHaveLength(7);
    expect(await eventOf(t, who, a)).toMatchObject({ status: "Delivered", attempts: 4 });

    // So two of three new conversions still fit; the third is Held.
    const fresh = await convertMany(who, 3);
    expect(await tick()).toBe(3);
    expect(rx.at(p)).toHaveLength(9);
    const statuses = await Promise.all(fresh.map(async (id) => (await eventOf(t, who, id)).status));
    expect(statuses.sort()).toEqual(["Delivered", "Delivered", "Held"]);
    expect((await allowanceIssues(who))[0]?.status).toBe("open");

    // Over the allowance: a resend of a counted event and a simulation still go out, free.
    expect((await resend(t, who, eventA.id)).statusCode).toBe(200);
    await simulateEvent(t, who, hook, null);
    expect(await tick()).toBe(2);
    expect(rx.at(p)).toHaveLength(11);
    // A resend of the Held one does not get around the allowance.
    const heldEvent = (await listAll(who, "&status=Held"))[0] as Event;
    expect(fresh).toContain(heldEvent.conversionId);
    expect((await resend(t, who, heldEvent.id)).statusCode).toBe(200);
    expect(await tick()).toBe(1);
    expect(rx.at(p)).toHaveLength(11);
    expect((await eventOf(t, who, heldEvent.conversionId as string)).status).toBe("Held");

    const [usage] = await t.ctx.db.query<{ sent: number }>(
      "select sent from webhook_usage where tenant_id = $1 and month = '2026-11-01'",
      [who.tenantId],
    );
    expect(Number(usage?.sent)).toBe(3);
  });

  it("raising the allowance through the admin API checks the Held events again at once", async () => {
    const who = await meteredTenant(1); // below 1.1: two deliveries a month
    const p = path("raise");
    await hookTo(who, withId(rx, p));
    await convertMany(who, 5);
    expect(await tick()).toBe(5);
    expect(rx.at(p)).toHaveLength(2);
    expect(await statusCounts(who)).toEqual({ Delivered: 2, Held: 3 });

    // 2 -> below 2.2: one more fits, without waiting for the recheck.
    await setAllowance(who, 2);
    expect(await tick()).toBe(3);
    expect(rx.at(p)).toHaveLength(3);
    expect(await statusCounts(who)).toEqual({ Delivered: 3, Held: 2 });
    expect((await allowanceIssues(who))[0]?.status).toBe("open");

    // Unlimited: the rest go out and the issue closes.
    await setAllowance(who, null);
    expect(await tick()).toBe(2);
    expect(rx.at(p)).toHaveLength(5);
    expect(await statusCounts(who)).toEqual({ Delivered: 5 });
    expect((await allowanceIssues(who))[0]?.status).toBe("closed");
  });

  it("webhookAllowance null is unlimited; 0 holds everything", async () => {
    const unlimited = await meteredTenant(null);
    const pUnlimited = path("unlimited");
    await hookTo(unlimited, withId(rx, pUnlimited));
    await convertMany(unlimited, 40);
    expect(await tick()).toBe(40);
    expect(rx.at(pUnlimited)).toHaveLength(40);
    expect(await statusCounts(unlimited)).toEqual({ Delivered: 40 });
    expect(await allowanceIssues(unlimited)).toEqual([]);

    const none = await meteredTenant(0);
    const pNone = path("none");
    await hookTo(none, withId(rx, pNone));
    await convertMany(none, 3);
    expect(await tick()).toBe(3);
    expect(rx.at(pNone)).toEqual([]);
    expect(await statusCounts(none)).toEqual({ Held: 3 });
    expect((await allowanceIssues(none))[0]?.status).toBe("open");
  });

  it("meters each tenant on its own", async () => {
    const full = await meteredTenant(1);
    const other = await meteredTenant(1);
    const [pFull, pOther] = [path("full"), path("other")];
    await hookTo(full, withId(rx, pFull));
    await hookTo(other, withId(rx, pOther));
    await convertMany(full, 4);
    await tick();
    expect(rx.at(pFull)).toHaveLength(2);
    await convertMany(other, 2);
    await tick();
    expect(rx.at(pOther)).toHaveLength(2);
    expect(await allowanceIssues(other)).toEqual([]);
  });

  it("allowance 50: exactly 55 (below 110%) are sent", async () => {
    const who = await meteredTenant(50);
    const p = path("fifty");
    await hookTo(who, withId(rx, p));
    await convertMany(who, 60);
    expect(await tick()).toBe(60);
    expect(rx.at(p)).toHaveLength(55);
    expect(await statusCounts(who)).toEqual({ Delivered: 55, Held: 5 });
  });
});
