/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { Webhook } from "../src/features/outgoing-webhooks/settings-service.js";
import { DAY_MS, HOUR_MS, MINUTE_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  cancelWaitingEvents,
  convert,
  createHook,
  enableHook,
  eventOf,
  getHook,
  patchHook,
  simulateEvent,
  startWebhookTestApp,
  WEBHOOKS_API,
} from "./helpers/webhooks.js";

// Suspension of an outgoing webhook that got nothing but failures for 5 days
// (docs/outgoing-webhooks.md: Enabled -> Suspended when nothing but failures came back for 5
// days; Suspended -> Enabled only by the caller, a suspended webhook sends nothing until then).
// Time is the app's clock; a real loopback receiver answers 500 or 200; the worker is ticked by
// hand. Retries come about every WEBHOOK_RETRY_INTERVAL_S (one hour here, ±10%).

const FAIL = { status: 500, body: "down" };
const OK = { status: 200, body: "ok" };

let t: TestApp;
let rx: Receiver;
/** The instant every test starts at (T): tests move the clock, afterEach puts it back. */
let START: Date;
let pathCounter = 0;

beforeAll(async () => {
  t = await startWebhookTestApp({ env: { WEBHOOK_RETRY_INTERVAL_S: "3600" } });
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

const tick = () => t.ctx.delivery.tick();
/** Sets the clock to T + ms. */
const at = (ms: number) => t.clock.set(new Date(START.getTime() + ms));

/**
 * A webhook whose receiver path ends in the conversion type, so real conversions (Signup) and
 * simulated events (Qualifier) can be answered differently: `${p}/Signup`, `${p}/Qualifier`.
 */
async function failingHook(who: Tenancy): Promise<{ hook: Webhook; real: string; simulated: string }> {
  const p = `/susp${++pathCounter}`;
  const [real, simulated] = [`${p}/Signup`, `${p}/Qualifier`];
  rx.on(real, FAIL);
  rx.on(simulated, FAIL);
  const hook = await createHook(t, who, {
    name: "Flaky receiver",
    url: `${rx.base}${p}/\${conversionType}?c=\${conversionId}`,
  });
  return { hook, real, simulated };
}

const statusOfHook = async (who: Tenancy, id: string) => (await getHook(t, who, id)).status;

/** A simulated Qualifier, answered on the `simulated` path; returns the event's id. */
const simulate = (who: Tenancy, hookId: string) => simulateEvent(t, who, hookId, { conversionType: "Qualifier" });

const statusOf = async (who: Tenancy, conversionId: string) => (await eventOf(t, who, conversionId)).status;

describe("suspension after 5 days of nothing but failures", () => {
  it("stays Enabled while the failures span less than 5 days; the first failed attempt at 5 days suspends it", async () => {
    const who = await seedTenancy(t);
    const { hook, real } = await failingHook(who);

    const a = await convert(t, who);
    expect(await tick()).toBe(1);
    expect(await statusOf(who, a)).toBe("Retrying");
    expect(await getHook(t, who, hook.id)).toMatchObject({ status: "Enabled", statusReason: null });

    // One minute short of 5 days: the retry of the first and a new conversion fail, still Enabled.
    at(5 * DAY_MS - MINUTE_MS);
    const b = await convert(t, who);
    expect(await tick()).toBe(2);
    expect(rx.at(real)).toHaveLength(3);
    expect(await getHook(t, who, hook.id)).toMatchObject({ status: "Enabled", statusReason: null });

    // Exactly 5 days after the first failure: the next failed attempt suspends it.
    at(5 * DAY_MS);
    const c = await convert(t, who);
    expect(await tick()).toBe(1);
    expect(rx.at(real)).toHaveLength(4);
    const suspended = await getHook(t, who, hook.id);
    expect(suspended.status).toBe("Suspended");
    expect(suspended.statusReason).toMatch(/fail/i);

    // A suspended webhook sends nothing: new events are Paused, due retries are paused unsent.
    const d = await convert(t, who);
    expect(await statusOf(who, d)).toBe("Paused");
    at(5 * DAY_MS + 2 * HOUR_MS);
    expect(await tick()).toBe(3);
    t.clock.advance(DAY_MS);
    expect(await tick()).toBe(0);
    expect(rx.at(real)).toHaveLength(4);
    for (const id of [a, b, c, d]) expect(await statusOf(who, id), id).toBe("Paused");
    expect(await statusOfHook(who, hook.id)).toBe("Suspended");

    // Only the caller enables it again; the Paused events then go out.
    rx.on(real, OK);
    expect(await enableHook(t, who, hook.id)).toMatchObject({ status: "Enabled", statusReason: null });
    expect(await tick()).toBe(4);
    expect(rx.at(real)).toHaveLength(8);
    expect(
      rx
        .at(real)
        .slice(4)
        .map((r) => r.query.get("c"))
        .sort(),
    ).toEqual([a, b, c, d].sort());
    for (const id of [a, b, c, d]) expect(await statusOf(who, id), id).toBe("Delivered");
    expect(await statusOfHook(who, hook.id)).toBe("Enabled");
  });

  it("counts the retries of one event: its first failed retry at 5 days or later suspends the webhook", async () => {
    const who = await seedTenancy(t);
    const { hook, real } = await failingHook(who);
    const a = await convert(t, who);
    await tick();
    for (const offset of [2 * DAY_MS, 4 * DAY_MS, 4 * DAY_MS + 23 * HOUR_MS]) {
      at(offset);
      expect(await tick()).toBe(1);
      expect(await statusOfHook(who, hook.id)).toBe("Enabled");
    }
    at(5 * DAY_MS + HOUR_MS);
    expect(await tick()).toBe(1);
    expect(rx.at(real)).toHaveLength(5);
    expect((await eventOf(t, who, a)).attempts).toBe(5);
    expect(await statusOfHook(who, hook.id)).toBe("Suspended");

    // Its next retry is not sent: the event is Paused instead.
    at(5 * DAY_MS + 3 * HOUR_MS);
    expect(await tick()).toBe(1);
    expect(rx.at(real)).toHaveLength(5);
    expect(await eventOf(t, who, a)).toMatchObject({ status: "Paused", attempts: 5 });
  });

  it("one 2xx in between ends the run: 5 more days of failures are needed", async () => {
    const who = await seedTenancy(t);
    const { hook, real } = await failingHook(who);
    await convert(t, who);
    await tick();

    // Day 3: the receiver answers 200 once (the retry and a new conversion are delivered).
    at(3 * DAY_MS);
    rx.on(real, OK);
    await convert(t, who);
    expect(await tick()).toBe(2);
    rx.on(real, FAIL);

    // A new run starts at 3 days 1 hour.
    at(3 * DAY_MS + HOUR_MS);
    await convert(t, who);
    await tick();
    // 5 days after the first failure, but not after the success: still Enabled.
    at(5 * DAY_MS + HOUR_MS);
    await convert(t, who);
    await tick();
    expect(await statusOfHook(who, hook.id)).toBe("Enabled");
    at(8 * DAY_MS + HOUR_MS - MINUTE_MS);
    await convert(t, who);
    await tick();
    expect(await statusOfHook(who, hook.id)).toBe("Enabled");

    // 5 days after the first failure of the new run.
    at(8 * DAY_MS + HOUR_MS);
    await convert(t, who);
    expect(await tick()).toBe(1);
    expect(await statusOfHook(who, hook.id)).toBe("Suspended");
    expect(rx.at(real).length).toBeGreaterThanOrEqual(8);
  });

  it("simulated failures neither start nor extend a run", async () => {
    const who = await seedTenancy(t);
    const { hook, real, simulated } = await failingHook(who);

    // The first failure of all is a simulation's.
    await simulate(who, hook.id);
    expect(await tick()).toBe(1);
    expect(rx.at(simulated)).toHaveLength(1);

    // The first real failure, a day later, starts the run.
    at(DAY_MS);
    await convert(t, who);
    await tick();
    expect(rx.at(real)).toHaveLength(1);

    // 5.5 days after the simulation failed, 4.5 after the real one: simulated failures again.
    at(5 * DAY_MS + 12 * HOUR_MS);
    await simulate(who, hook.id);
    await tick();
    expect(rx.at(simulated).length).toBeGreaterThanOrEqual(3);
    expect(await statusOfHook(who, hook.id)).toBe("Enabled");

    // 5 days after the first real failure.
    at(6 * DAY_MS + HOUR_MS);
    await convert(t, who);
    await tick();
    expect(await statusOfHook(who, hook.id)).toBe("Suspended");
  });

  it("a simulated 2xx does not end a run of real failures", async () => {
    const who = await seedTenancy(t);
    const { hook, real, simulated } = await failingHook(who);
    rx.on(simulated, OK);
    await convert(t, who);
    await tick();

    at(2 * DAY_MS);
    const simulation = await simulate(who, hook.id);
    await tick();
    expect(rx.at(simulated)).toHaveLength(1);
    const res = await t.call({
      method: "GET",
      url: `${WEBHOOKS_API}/events/${simulation}`,
      headers: { authorization: who.apiKey },
    });
    expect(res.json().data).toMatchObject({ simulated: true, status: "Delivered" });
    expect(await statusOfHook(who, hook.id)).toBe("Enabled");

    at(5 * DAY_MS);
    await convert(t, who);
    await tick();
    expect(await statusOfHook(who, hook.id)).toBe("Suspended");
    expect(rx.at(real).length).toBeGreaterThanOrEqual(3);
  });

  // Only a status change restarts the count: a PATCH resending the current status (a form saving
  // every field, say) must not give a failing webhook 5 more days.
  it("a PATCH carrying the current status does not restart the 5 days of failures", async () => {
    const who = await seedTenancy(t);
    const { hook, real } = await failingHook(who);
    await convert(t, who);
    expect(await tick()).toBe(1);
    expect(rx.at(real)).toHaveLength(1);

    at(3 * DAY_MS);
    const saved = await patchHook(t, who, hook.id, { status: "Enabled", name: "Flaky receiver, renamed" });
    expect(saved).toMatchObject({ status: "Enabled", statusReason: null, name: "Flaky receiver, renamed" });

    // 5 days after the first failure: the next failed attempts suspend it, as without the PATCH.
    at(5 * DAY_MS);
    await convert(t, who);
    expect(await tick()).toBe(2);
    const suspended = await getHook(t, who, hook.id);
    expect(suspended.status).toBe("Suspended");
    expect(suspended.statusReason).toMatch(/fail/i);
  });

  it("re-enabled while the receiver still fails: it is suspended again only 5 days after the next failure", async () => {
    const who = await seedTenancy(t);
    const { hook, real } = await failingHook(who);
    await convert(t, who);
    await tick();
    at(5 * DAY_MS);
    await convert(t, who);
    await tick();
    expect(await statusOfHook(who, hook.id)).toBe("Suspended");

    // Both events were left Retrying by the attempts that suspended it; their retries are due.
    at(5 * DAY_MS + 2 * HOUR_MS);
    expect(await enableHook(t, who, hook.id)).toMatchObject({ status: "Enabled", statusReason: null });
    const sent = rx.at(real).length;
    expect(await tick()).toBe(2);
    expect(rx.at(real)).toHaveLength(sent + 2);
    expect(await statusOfHook(who, hook.id)).toBe("Enabled");

    at(10 * DAY_MS + 2 * HOUR_MS - MINUTE_MS);
    await convert(t, who);
    await tick();
    expect(await statusOfHook(who, hook.id)).toBe("Enabled");
    at(10 * DAY_MS + 2 * HOUR_MS);
    await convert(t, who);
    await tick();
    expect(await statusOfHook(who, hook.id)).toBe("Suspended");
  });
});
