import { afterAll, afterEach, beforeAll } from "vitest";
import { DAY_MS } from "../../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./app.js";
import { type Receiver, startReceiver } from "./receiver.js";
import { cancelWaitingEvents, convert, getEvent, signInPerson, startWebhookTestApp, WEBHOOKS_API } from "./webhooks.js";

/**
 * The harness of the webhook event operations tests (resend, cancel, delete, attempts,
 * simulate): an app and a loopback receiver per file, the delivery worker ticked by hand, and
 * the clock put back after each test. Call it at the top of a test file.
 */
export function operationsHarness() {
  let t: TestApp;
  let rx: Receiver;
  /** The instant every test starts at: tests move the clock, afterEach puts it back. */
  let start: Date;

  beforeAll(async () => {
    t = await startWebhookTestApp();
    rx = await startReceiver();
    start = t.clock.now();
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });
  afterEach(async () => {
    await cancelWaitingEvents(t);
    t.clock.set(start);
  });

  const auth = (authorization: string) => ({ authorization });
  return {
    app: () => t,
    receiver: () => rx,
    /** The instant every test starts at (the clock is put back to it after each test). */
    started: () => start,
    tick: () => t.ctx.delivery.tick(),
    auth,
    /** A tenant whose person is account.admin only and whose key also carries traffic-sources.delete. */
    tenant: () => seedTenancy(t, { key: { scopes: ["traffic-sources.delete"] } }),
    /** Another signed-in person on the tenant, with exactly these permissions; returns the bearer header. */
    person: async (who: Tenancy, permissions: string[]) =>
      (await signInPerson(t, who.tenantId, { name: "Ops person", permissions })).bearer,
    statusOf: async (who: Tenancy, id: string) => (await getEvent(t, who, id)).status,
    /** Attempt rows in the table, whatever the API still shows. */
    async attemptRows(eventIds: string[]): Promise<number> {
      const [row] = await t.ctx.db.query<{ n: string | number }>(
        "select count(*) as n from webhook_attempts where event_id = any($1::text[])",
        [eventIds],
      );
      return Number(row?.n);
    },
    cancel: (authorization: string, payload: Record<string, unknown>) =>
      t.call({ method: "POST", url: `${WEBHOOKS_API}/events/cancel`, headers: auth(authorization), payload }),
    deleteRange: (authorization: string, payload: Record<string, unknown>) =>
      t.call({ method: "POST", url: `${WEBHOOKS_API}/events/delete`, headers: auth(authorization), payload }),
    deleteOne: (authorization: string, id: string) =>
      t.call({ method: "DELETE", url: `${WEBHOOKS_API}/events/${id}`, headers: auth(authorization) }),
    /** `YYYY-MM-DD` of the UTC day `n` days before the start instant's. */
    dayBefore: (n: number) => new Date(start.getTime() - n * DAY_MS).toISOString().slice(0, 10),
    /** Records a conversion at `at` (the clock moved there) and returns its id. */
    async convertAt(who: Tenancy, at: string): Promise<string> {
      t.clock.set(at);
      return convert(t, who);
    },
  };
}
