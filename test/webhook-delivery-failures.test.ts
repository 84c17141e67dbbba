/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { describe, expect, it } from "vitest";
import { claimDue, deliver } from "../src/features/outgoing-webhooks/delivery.js";
import type { Attempt, DeliveryEvent as Event } from "../src/features/outgoing-webhooks/event-service.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import { AddressPolicy } from "../src/platform/webhook-sender.js";
import { seedTenancy, startTestApp, type Tenancy } from "./helpers/app.js";
import { closedPort, selfSignedCertificate, startReceiver } from "./helpers/receiver.js";
import { deliveryFixture, path, rx, t, tick } from "./helpers/webhook-delivery.js";
import {
  attemptsOf,
  conversionsAt,
  createHook,
  eventOf,
  getEvent,
  recordConversion,
  seedTenantWithCatalog,
  WEBHOOKS_API,
  withId,
} from "./helpers/webhooks.js";

// Outgoing conversion webhooks that fail (docs/outgoing-webhooks.md): retries, their
// schedule and their end, and the leases that keep two workers from sending one event twice.

deliveryFixture();

describe("failures and retries", () => {
  /** One conversion to a fresh webhook at `url`; delivers it once and returns the event and its attempt. */
  async function failOnce(url: string): Promise<{ who: Tenancy; event: Event; attempt: Attempt }> {
    const { who } = await seedTenantWithCatalog(t);
    await createHook(t, who, { url });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    const event = await eventOf(t, who, conversion.id);
    const attempts = await attemptsOf(t, who, event.id);
    expect(attempts).toHaveLength(1);
    return { who, event, attempt: attempts[0] as Attempt };
  }

  it("retries a 5xx about one interval later and then delivers", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("flaky");
    rx.on(p, [{ status: 503, body: "busy" }, { status: 200 }]);
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const first = t.clock.now().getTime();
    await tick();

    const retrying = await eventOf(t, who, conversion.id);
    expect(retrying).toMatchObject({ status: "Retrying", attempts: 1, lastAttemptAt: new Date(first).toISOString() });
    const next = Date.parse(retrying.nextAttemptAt ?? "");
    expect(next).toBeGreaterThanOrEqual(first + 0.9 * HOUR_MS);
    expect(next).toBeLessThanOrEqual(first + 1.1 * HOUR_MS);

    // Not due yet: nothing is sent.
    await tick();
    t.clock.advance(0.89 * HOUR_MS);
    await tick();
    expect(rx.at(p)).toHaveLength(1);

    t.clock.set(new Date(next));
    await tick();
    expect(rx.at(p)).toHaveLength(2);
    expect(await eventOf(t, who, conversion.id)).toMatchObject({
      status: "Delivered",
      attempts: 2,
      lastAttemptAt: new Date(next).toISOString(),
      nextAttemptAt: null,
    });
  });

  it("classifies a receiver that hangs past the timeout as timeout", async () => {
    const p = path("hang");
    rx.on(p, "hang");
    const { event, attempt } = await failOnce(`${rx.base}${p}`);
    expect(rx.at(p)).toHaveLength(1);
    expect(event.status).toBe("Retrying");
    expect(attempt).toMatchObject({ errorType: "timeout", response: null });
    expect(attempt.error).toEqual(expect.any(String));
    expect(attempt.durationMs).toBeGreaterThanOrEqual(450);
    expect(attempt.durationMs).toBeLessThan(2000);
  });

  it("gives up on a receiver that answers at once but never finishes its body (timeout)", async () => {
    const p = path("trickle");
    rx.on(p, "trickle");
    const { event, attempt } = await failOnce(`${rx.base}${p}`);
    expect(rx.at(p)).toHaveLength(1);
    expect(event.status).toBe("Retrying");
    expect(attempt.errorType).toBe("timeout");
    expect(attempt.durationMs).toBeLessThan(2000);
  });

  // The receiver's body is stored in jsonb, which cannot hold U+0000: unless deliver
  // (src/features/outgoing-webhooks/delivery.ts) cleans it, the attempt's transaction fails,
  // nothing is logged, and the event is sent again every time its lease runs out, past the
  // 10-attempt cap.
  it("logs a 2xx whose body holds a NUL character and sends it only once", async () => {
    const p = path("nul-body");
    rx.on(p, { status: 200, body: "ok\u0000done" });
    const { who } = await seedTenantWithCatalog(t);
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    for (let i = 0; i < 3; i++) {
      t.clock.advance(HOUR_MS);
      await tick();
    }
    expect(rx.at(p)).toHaveLength(1);
    const event = await eventOf(t, who, conversion.id);
    expect(event).toMatchObject({ status: "Delivered", attempts: 1 });
    expect(await attemptsOf(t, who, event.id)).toHaveLength(1);
  });

  it("classifies a host name that does not resolve as dns", async () => {
    const { event, attempt } = await failOnce("http://no-such-receiver.invalid/pb");
    expect(event.status).toBe("Retrying");
    expect(attempt).toMatchObject({ errorType: "dns", response: null });
  });

  it("classifies a closed port as connection_refused", async () => {
    const { event, attempt } = await failOnce(`http://127.0.0.1:${await closedPort()}/nobody`);
    expect(event.status).toBe("Retrying");
    expect(attempt).toMatchObject({ errorType: "connection_refused", response: null });
    expect(attempt.error).toMatch(/ECONNREFUSED/);
  });

  it("classifies a reset connection as connection_refused", async () => {
    const p = path("reset");
    rx.on(p, "reset");
    const { event, attempt } = await failOnce(`${rx.base}${p}`);
    expect(rx.at(p)).toHaveLength(1);
    expect(event.status).toBe("Retrying");
    expect(attempt).toMatchObject({ errorType: "connection_refused", response: null });
  });

  it("refuses a self-signed certificate as tls, sending no request", async () => {
    const https = await startReceiver({ tls: await selfSignedCertificate() });
    try {
      const { event, attempt } = await failOnce(`${https.base}/secure?c=\${conversionId}`);
      expect(event.status).toBe("Retrying");
      expect(attempt).toMatchObject({ errorType: "tls", response: null });
      expect(https.requests).toEqual([]);
      // The receiver was reached: the sender broke off at the certificate, before any request.
      expect(https.connections).toBeGreaterThan(0);
    } finally {
      await https.close();
    }
  });

  it("records a non-2xx answer as http_status with the receiver's response", async () => {
    const p = path("500");
    rx.on(p, { status: 500, body: "boom", headers: { "x-receiver": "r1" } });
    const { attempt } = await failOnce(`${rx.base}${p}`);
    expect(attempt.errorType).toBe("http_status");
    expect(attempt.error).toContain("500");
    expect(attempt.response).toMatchObject({ status: 500, body: "boom", headers: { "x-receiver": "r1" } });
  });

  it.each([
    ["a bare placeholder", "${clickId}"],
    ["a scheme that is not http", "{{{conversionType}}}://receiver.example/x"],
  ])("classifies a stored URL that renders to garbage (%s) as invalid_url", async (_label, template) => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("never");
    const hook = await createHook(t, who, { url: `${rx.base}${p}` });
    // Saved before save-time validation existed: only SQL can write it now.
    await t.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1", [hook.id, template]);
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    expect(rx.at(p)).toEqual([]);
    const event = await eventOf(t, who, conversion.id);
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt).toMatchObject({ errorType: "invalid_url", response: null, urlTemplate: template });
  });

  it("refuses a private address as blocked_address even with loopback allowed", async () => {
    for (const url of ["http://10.0.0.1/pb", "http://169.254.169.254/latest/meta-data", "http://[fd00::1]/pb"]) {
      // Refused at save now (integrator-webhooks.test.ts): a URL stored before that is still
      // refused at send, which only SQL can set up.
      const { who } = await seedTenantWithCatalog(t);
      const hook = await createHook(t, who, { url: "https://receiver.example/pb" });
      await t.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1", [hook.id, url]);
      const conversion = await recordConversion(t, who, { type: "Signup" });
      await tick();
      const event = await eventOf(t, who, conversion.id);
      const [attempt, ...more] = await attemptsOf(t, who, event.id);
      expect(more).toEqual([]);
      expect(attempt, url).toMatchObject({ errorType: "blocked_address", response: null });
    }
  });

  it("refuses loopback, by address and by a name resolving to it, without WEBHOOK_ALLOWED_HOSTS", async () => {
    const strict = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: "500" } });
    try {
      const who = await seedTenancy(strict);
      const p = path("strict");
      const urls = [
        `${rx.base}${p}`,
        `http://localhost:${rx.port}${p}`,
        `http://[::ffff:127.0.0.1]:${rx.port}${p}`,
        `http://[::1]:${rx.port}${p}`,
      ];
      for (const url of urls) {
        // Refused at save now (integrator-webhooks.test.ts); the send-time screen still guards
        // a URL stored before that, which only SQL can set up.
        const res = await strict.call({
          method: "POST",
          url: `${WEBHOOKS_API}/settings`,
          headers: { authorization: who.apiKey },
          payload: { name: "Loopback", url: "https://receiver.example/pb", method: "GET" },
        });
        expect(res.statusCode, res.body).toBe(201);
        await strict.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1", [res.json().data.id, url]);
      }
      const recorded = await strict.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: who.apiKey },
        payload: { type: "Signup" },
      });
      expect(recorded.statusCode).toBe(201);
      expect(await strict.ctx.delivery.tick()).toBe(urls.length);
      const rows = await strict.ctx.db.query<{ url_template: string; error_type: string; response: unknown }>(
        "select url_template, error_type, response from webhook_attempts order by url_template",
      );
      expect(rows.map((r) => r.url_template).sort()).toEqual([...urls].sort());
      for (const row of rows)
        expect(row, row.url_template).toMatchObject({ error_type: "blocked_address", response: null });
      expect(rx.at(p)).toEqual([]);
    } finally {
      await strict.close();
    }
  });

  it("gives up after 10 failed attempts: Failed, and nothing more is sent", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("always-500");
    rx.on(p, { status: 500 });
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    for (let attempt = 1; attempt <= 10; attempt++) {
      await tick();
      const event = await eventOf(t, who, conversion.id);
      expect(event.attempts).toBe(attempt);
      expect(event.status).toBe(attempt < 10 ? "Retrying" : "Failed");
      t.clock.advance(1.2 * HOUR_MS);
    }
    expect(rx.at(p)).toHaveLength(10);
    const failed = await eventOf(t, who, conversion.id);
    expect(failed.nextAttemptAt).toBeNull();
    t.clock.advance(DAY_MS);
    await tick();
    expect(rx.at(p)).toHaveLength(10);
    expect((await attemptsOf(t, who, failed.id)).map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("stops retrying an event when the next try would fall after 10 days: Failed", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("old-event");
    rx.on(p, { status: 502 });
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const created = t.clock.now().getTime();
    await tick();
    expect((await eventOf(t, who, conversion.id)).status).toBe("Retrying");

    // The retry ran late (workers were down): it is tried once more, and the one after would
    // be past ten days since the event was created.
    t.clock.set(new Date(created + 10 * DAY_MS - 30 * 60_000));
    await tick();
    expect(rx.at(p)).toHaveLength(2);
    expect(await eventOf(t, who, conversion.id)).toMatchObject({ status: "Failed", attempts: 2, nextAttemptAt: null });
    t.clock.advance(2 * HOUR_MS);
    await tick();
    expect(rx.at(p)).toHaveLength(2);
  });
});

describe("leases", () => {
  const settings = () => ({
    timeoutMs: 500,
    retryIntervalMs: HOUR_MS,
    policy: new AddressPolicy(["127.0.0.1"]),
  });

  it("does not let a second worker take an event while its lease holds, but does once it ran out", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("lease");
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const event = await eventOf(t, who, conversion.id);

    // A worker claims it with a short lease and then dies.
    const claim = await claimDue(t.ctx.db, t.clock.now(), 64, 5_000);
    const held = claim.events.find((e) => e.id === event.id);
    expect(held).toBeDefined();
    expect(await tick()).toBe(0);
    t.clock.advance(4_000);
    expect(await tick()).toBe(0);
    expect(rx.at(p)).toEqual([]);

    t.clock.advance(2_000);
    expect(await tick()).toBe(1);
    expect(conversionsAt(rx, p)).toEqual([conversion.id]);
    expect(await getEvent(t, who, event.id)).toMatchObject({ status: "Delivered", attempts: 1 });

    // The stale holder wakes up and tries: it may send and its attempt is logged, but it
    // cannot write the outcome over the new holder's (here a failure over a delivery).
    rx.on(p, { status: 500 });
    const outcome = await deliver(t.ctx.db, held as NonNullable<typeof held>, claim.token, settings(), () =>
      t.clock.now(),
    );
    expect(outcome).toBe("stale");
    expect(rx.at(p)).toHaveLength(2);
    expect(await getEvent(t, who, event.id)).toMatchObject({ status: "Delivered", attempts: 1, nextAttemptAt: null });
    const attempts = await attemptsOf(t, who, event.id);
    expect(attempts).toHaveLength(2);
    expect(attempts.map((a) => a.errorType).sort()).toEqual(["http_status", null].sort());
  });

  it("lets the holder of the current lease record the outcome", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("holder");
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const claim = await claimDue(t.ctx.db, t.clock.now(), 64, 60_000);
    const held = claim.events.find((e) => e.conversion_type === "Signup" && e.snapshot.conversionId === conversion.id);
    expect(held).toBeDefined();
    const outcome = await deliver(t.ctx.db, held as NonNullable<typeof held>, claim.token, settings(), () =>
      t.clock.now(),
    );
    expect(outcome).toBe("delivered");
    expect(await eventOf(t, who, conversion.id)).toMatchObject({ status: "Delivered", attempts: 1 });
  });
});
