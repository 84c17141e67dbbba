import { Webhook, WebhookVerificationError } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { claimDue, deliver } from "../src/features/notifications/delivery.js";
import { emitNotification } from "../src/features/notifications/index.js";
import { SecretBox } from "../src/features/notifications/signing.js";
import { HOUR_MS, MINUTE_MS } from "../src/platform/durations.js";
import { SecretsKeyring } from "../src/platform/sealed-box.js";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type Received, type Receiver, startReceiver } from "./helpers/receiver.js";

const BASE = "/api/v1/notifications/webhooks";
/** The default NOTIFICATION_RETRY_SCHEDULE, 5m,25m,1h,2h,3h30m, in seconds. */
const DEFAULT_SCHEDULE_S = [300, 1500, 3600, 7200, 12600];

let t: TestApp;
let rx: Receiver;
let paths = 0;

beforeAll(async () => {
  rx = await startReceiver();
  t = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_TIMEOUT_MS: "500" } });
});
afterAll(async () => {
  await t.close();
  await rx.close();
});

const path = (label: string) => `/hook-${label}-${++paths}`;

async function register(who: Tenancy, url: string, events?: string[]): Promise<{ id: string; secret: string }> {
  const res = await t.call({
    method: "POST",
    url: BASE,
    headers: { authorization: who.apiKey },
    payload: { url, ...(events ? { events } : {}) },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/** An operational event, as a state change would emit it in its own transaction. */
async function emit(
  who: Tenancy,
  type: "issue.opened" | "issue.closed" = "issue.opened",
  data: Record<string, unknown> = { id: "iss_x" },
) {
  await t.ctx.db.transaction((tx) => emitNotification(tx, who.tenantId, type, data, t.clock.now()));
}

const tick = () => t.ctx.notifications.worker.tick();

/** Headers as a receiver reads them, in the shape the verifier library takes. */
function headersOf(request: Received): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value]] : [])),
  );
}

async function deliveries(who: Tenancy, webhookId: string, query = "") {
  const res = await t.call({
    method: "GET",
    url: `${BASE}/${webhookId}/deliveries${query}`,
    headers: { authorization: who.apiKey },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

describe("signed delivery", () => {
  it("sends { type, timestamp, data } that the standardwebhooks library verifies as sent", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const p = path("signed");
    const hook = await register(who, `${rx.base}${p}`);
    await emit(who, "issue.opened", { id: "iss_1", title: "Something broke" });
    expect(await tick()).toBe(1);
    const [request] = rx.at(p);
    if (!request) throw new Error("nothing received");
    expect(request.method).toBe("POST");
    expect(request.headers["content-type"]).toBe("application/json");
    expect(request.headers["webhook-id"]).toMatch(/^msg_/);
    expect(request.headers["webhook-timestamp"]).toBe(String(Math.floor(t.clock.now().getTime() / 1000)));
    expect(request.headers["service-webhook-signature"]).toMatch(/^v1,[A-Za-z0-9+/]+=*$/);
    expect(request.headers["webhook-signature"]).toBe(request.headers["service-webhook-signature"]);

    const payload = new Webhook(hook.secret).verify(request.body, headersOf(request));
    expect(payload).toEqual({
      type: "issue.opened",
      timestamp: t.clock.now().toISOString(),
      data: { id: "iss_1", title: "Something broke" },
    });
    expect(JSON.parse(request.body)).toEqual(payload);
  });

  it("fails verification for a tampered body, another secret, or a stale timestamp", async () => {
    const who = await seedTenancy(t);
    const p = path("tamper");
    const hook = await register(who, `${rx.base}${p}`);
    const other = await register(who, `${rx.base}${path("other")}`);

    // Sent 10 minutes ago: past the library's 5-minute tolerance.
    t.clock.set(new Date(Date.now() - 10 * MINUTE_MS));
    await emit(who);
    await tick();
    const [stale] = rx.at(p);
    if (!stale) throw new Error("nothing received");
    expect(() => new Webhook(hook.secret).verify(stale.body, headersOf(stale))).toThrow(/too old/);

    t.clock.set(new Date());
    await emit(who);
    await tick();
    const fresh = rx.at(p)[1];
    if (!fresh) throw new Error("nothing received");
    const verifier = new Webhook(hook.secret);
    expect(() => verifier.verify(fresh.body, headersOf(fresh))).not.toThrow();
    const tampered = fresh.body.replace('"iss_x"', '"iss_y"');
    expect(tampered).not.toBe(fresh.body);
    expect(() => verifier.verify(tampered, headersOf(fresh))).toThrow(WebhookVerificationError);
    expect(() => verifier.verify(fresh.body, { ...headersOf(fresh), "webhook-id": "msg_other" })).toThrow(
      /No matching signature/,
    );
    expect(() => new Webhook(other.secret).verify(fresh.body, headersOf(fresh))).toThrow(/No matching signature/);
  });

  it("sends each event only to the webhooks whose filter takes it", async () => {
    const who = await seedTenancy(t);
    const [all, opened, closed] = [path("all"), path("opened"), path("closed")];
    await register(who, `${rx.base}${all}`);
    await register(who, `${rx.base}${opened}`, ["issue.opened"]);
    await register(who, `${rx.base}${closed}`, ["issue.closed", "api_token.expired"]);
    await emit(who, "issue.opened");
    await emit(who, "issue.closed");
    await tick();
    const types = (p: string) => rx.at(p).map((r) => JSON.parse(r.body).type);
    expect(types(all).sort()).toEqual(["issue.closed", "issue.opened"]);
    expect(types(opened)).toEqual(["issue.opened"]);
    expect(types(closed)).toEqual(["issue.closed"]);
    // Another tenant's events never reach this tenant's webhooks.
    await emit(await seedTenancy(t), "issue.opened");
    await tick();
    expect(rx.at(all)).toHaveLength(2);
  });
});

describe("retries", () => {
  it("retries five times on the default schedule with the same webhook-id, then marks the message Failed", async () => {
    const start = new Date();
    t.clock.set(start);
    const who = await seedTenancy(t);
    const p = path("retry");
    rx.on(p, { status: 503, body: "busy" });
    const hook = await register(who, `${rx.base}${p}`);
    await emit(who);
    expect(await tick()).toBe(1);
    let elapsedS = 0;
    for (const waitS of DEFAULT_SCHEDULE_S) {
      // Not a second early...
      t.clock.set(new Date(start.getTime() + (elapsedS + waitS - 1) * 1000));
      expect(await tick()).toBe(0);
      // ...and due on the dot.
      elapsedS += waitS;
      t.clock.set(new Date(start.getTime() + elapsedS * 1000));
      expect(await tick()).toBe(1);
    }
    t.clock.advance(24 * HOUR_MS);
    expect(await tick()).toBe(0);

    const received = rx.at(p);
    expect(received).toHaveLength(6);
    expect(new Set(received.map((r) => r.headers["webhook-id"])).size).toBe(1);
    expect(new Set(received.map((r) => r.body)).size).toBe(1);
    const stamps = received.map((r) => Number(r.headers["webhook-timestamp"]));
    expect(stamps.slice(1).map((s, i) => s - (stamps[i] ?? 0))).toEqual(DEFAULT_SCHEDULE_S);
    // Seven hours from the first attempt to the last.
    expect(elapsedS).toBe(7 * 3600);

    const history = await deliveries(who, hook.id);
    expect(history.pagination.total).toBe(1);
    const [message] = history.data;
    expect(message).toMatchObject({
      id: received[0]?.headers["webhook-id"],
      type: "issue.opened",
      status: "Failed",
      attemptCount: 6,
      nextAttemptAt: null,
      lastAttemptAt: new Date(start.getTime() + elapsedS * 1000).toISOString(),
    });
    expect(message.attempts.map((a: { attempt: number }) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6]);
    for (const attempt of message.attempts) {
      expect(attempt).toMatchObject({
        status: "failed",
        responseStatus: 503,
        responseBody: "busy",
        errorType: "http_status",
        error: "The receiver answered 503",
      });
      expect(attempt.durationMs).toBeGreaterThanOrEqual(0);
    }
  });

  it("stops retrying at the first 2xx and keeps the failed attempts in the history", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const p = path("recover");
    rx.on(p, ["reset", { status: 500 }, { status: 204 }]);
    const hook = await register(who, `${rx.base}${p}`);
    await emit(who);
    await tick();
    let [message] = (await deliveries(who, hook.id)).data;
    expect(message).toMatchObject({
      status: "Retrying",
      attemptCount: 1,
      nextAttemptAt: new Date(t.clock.now().getTime() + 5 * MINUTE_MS).toISOString(),
    });
    expect(message.attempts[0]).toMatchObject({
      status: "failed",
      responseStatus: null,
      errorType: "connection_refused",
    });
    t.clock.advance(5 * MINUTE_MS);
    await tick();
    t.clock.advance(25 * MINUTE_MS);
    await tick();
    t.clock.advance(HOUR_MS);
    expect(await tick()).toBe(0);
    [message] = (await deliveries(who, hook.id)).data;
    expect(message).toMatchObject({ status: "Delivered", attemptCount: 3, nextAttemptAt: null });
    expect(
      message.attempts.map((a: { status: string; responseStatus: number | null }) => [a.status, a.responseStatus]),
    ).toEqual([
      ["failed", null],
      ["failed", 500],
      ["succeeded", 204],
    ]);
    expect(rx.at(p)).toHaveLength(3);
  });

  it("follows a configured NOTIFICATION_RETRY_SCHEDULE", async () => {
    const custom = await startTestApp({
      env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_TIMEOUT_MS: "500", NOTIFICATION_RETRY_SCHEDULE: "1m,1h30m" },
    });
    try {
      const who = await seedTenancy(custom);
      const p = path("custom");
      rx.on(p, { status: 500 });
      const res = await custom.call({
        method: "POST",
        url: BASE,
        headers: { authorization: who.apiKey },
        payload: { url: `${rx.base}${p}` },
      });
      expect(res.statusCode).toBe(201);
      await custom.ctx.db.transaction((tx) =>
        emitNotification(tx, who.tenantId, "issue.closed", { id: "iss_c" }, custom.clock.now()),
      );
      await custom.ctx.notifications.worker.tick();
      custom.clock.advance(MINUTE_MS);
      await custom.ctx.notifications.worker.tick();
      custom.clock.advance(90 * MINUTE_MS);
      await custom.ctx.notifications.worker.tick();
      custom.clock.advance(24 * HOUR_MS);
      expect(await custom.ctx.notifications.worker.tick()).toBe(0);
      expect(rx.at(p)).toHaveLength(3);
      const [row] = await custom.ctx.db.query<{ status: string }>("select status from notification_messages");
      expect(row?.status).toBe("Failed");
    } finally {
      await custom.close();
    }
  });

  it.each([
    ["5m,soon", /bad duration 'soon'/],
    ["5m,,1h", /bad duration ''/],
    ["5m,0s", /zero duration '0s'/],
  ])("refuses NOTIFICATION_RETRY_SCHEDULE=%s at start, naming the variable", (value, message) => {
    expect(() => loadConfig({ NOTIFICATION_RETRY_SCHEDULE: value })).toThrow(ConfigError);
    expect(() => loadConfig({ NOTIFICATION_RETRY_SCHEDULE: value })).toThrow(/NOTIFICATION_RETRY_SCHEDULE/);
    expect(() => loadConfig({ NOTIFICATION_RETRY_SCHEDULE: value })).toThrow(message);
  });
});

describe("secret rotation", () => {
  it("signs with both secrets for 24 hours after a rotation, then with the new one only", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const p = path("rotation");
    const hook = await register(who, `${rx.base}${p}`);
    const rotated = await t.call({
      method: "POST",
      url: `${BASE}/${hook.id}/rotate-secret`,
      headers: { authorization: who.apiKey },
    });
    expect(rotated.statusCode).toBe(200);
    const newSecret: string = rotated.json().data.secret;

    await emit(who);
    await tick();
    const during = rx.at(p)[0];
    if (!during) throw new Error("nothing received");
    const signatures = String(during.headers["service-webhook-signature"]).split(" ");
    expect(signatures).toHaveLength(2);
    expect(during.headers["webhook-signature"]).toBe(during.headers["service-webhook-signature"]);
    // A receiver still on the old secret and one already on the new both verify it.
    expect(() => new Webhook(hook.secret).verify(during.body, headersOf(during))).not.toThrow();
    expect(() => new Webhook(newSecret).verify(during.body, headersOf(during))).not.toThrow();
    expect(signatures[0]).toBe(signatureAt(newSecret, during));

    // Still both just before the overlap ends; the new one only after.
    t.clock.advance(24 * HOUR_MS - 1000);
    await emit(who);
    await tick();
    const late = rx.at(p)[1];
    if (!late) throw new Error("nothing received");
    expect(String(late.headers["webhook-signature"]).split(" ")).toEqual([
      signatureAt(newSecret, late),
      signatureAt(hook.secret, late),
    ]);

    t.clock.advance(2000);
    await emit(who);
    await tick();
    const after = rx.at(p)[2];
    if (!after) throw new Error("nothing received");
    expect(after.headers["webhook-signature"]).toBe(signatureAt(newSecret, after));
    expect(after.headers["service-webhook-signature"]).toBe(signatureAt(newSecret, after));
  });
});

/**
 * The signature the library computes for a request with `secret`, at the request's own
 * timestamp: for requests sent on a clock moved hours ahead, which its verify() calls stale.
 */
function signatureAt(secret: string, request: Received): string {
  const timestamp = new Date(Number(request.headers["webhook-timestamp"]) * 1000);
  return new Webhook(secret).sign(String(request.headers["webhook-id"]), timestamp, request.body);
}

describe("history and the queue", () => {
  it("pages a webhook's messages newest first and filters them by status and type", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const [ok, down] = [path("ok"), path("down")];
    rx.on(down, { status: 500 });
    const good = await register(who, `${rx.base}${ok}`);
    const bad = await register(who, `${rx.base}${down}`);
    for (const type of ["issue.opened", "issue.closed", "issue.opened"] as const) {
      await emit(who, type);
      t.clock.advance(1000);
    }
    await tick();
    const all = await deliveries(who, good.id, "?limit=2");
    expect(all.pagination).toEqual({ offset: 0, limit: 2, total: 3 });
    expect(all.data.map((m: { type: string }) => m.type)).toEqual(["issue.opened", "issue.closed"]);
    expect(all.data[0].createdAt > all.data[1].createdAt).toBe(true);
    expect(all.data[0].payload).toEqual({
      type: "issue.opened",
      timestamp: all.data[0].createdAt,
      data: { id: "iss_x" },
    });
    expect((await deliveries(who, good.id, "?type=issue.closed")).pagination.total).toBe(1);
    expect((await deliveries(who, good.id, "?status=Delivered")).pagination.total).toBe(3);
    expect((await deliveries(who, bad.id, "?status=Retrying")).pagination.total).toBe(3);
    expect((await deliveries(who, bad.id, "?status=Delivered")).pagination.total).toBe(0);
    const refused = await t.call({
      method: "GET",
      url: `${BASE}/${good.id}/deliveries?type=issue.reopened`,
      headers: { authorization: who.apiKey },
    });
    expect(refused.statusCode).toBe(400);
    expect(refused.json().message).toMatch(/'issue.reopened'/);
    const unknown = await t.call({
      method: "GET",
      url: `${BASE}/wh_doesnotexist/deliveries`,
      headers: { authorization: who.apiKey },
    });
    expect(unknown.statusCode).toBe(404);
  });

  it("drops the messages of a deleted webhook, sent or not", async () => {
    const who = await seedTenancy(t);
    const p = path("deleted");
    const hook = await register(who, `${rx.base}${p}`);
    await emit(who);
    const res = await t.call({ method: "DELETE", url: `${BASE}/${hook.id}`, headers: { authorization: who.apiKey } });
    expect(res.statusCode).toBe(200);
    expect(await tick()).toBe(0);
    expect(rx.at(p)).toEqual([]);
    const rows = await t.ctx.db.query("select 1 from notification_messages where webhook_id = $1", [hook.id]);
    expect(rows).toEqual([]);
  });

  it("re-sends a message whose worker died holding its lease; the stale worker cannot record an outcome", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const p = path("crash");
    const hook = await register(who, `${rx.base}${p}`);
    await emit(who);
    // A worker claims it and stalls: its lease stands, no outcome is reported.
    const { token, messages } = await claimDue(t.ctx.db, t.clock.now(), 10, 30_000);
    const [claimed] = messages;
    if (!claimed) throw new Error("nothing claimed");
    expect(await tick()).toBe(0);
    t.clock.advance(31_000);
    expect(await tick()).toBe(1);
    expect(rx.at(p).map((r) => r.headers["webhook-id"])).toEqual([claimed.id]);

    // The stalled worker comes back and sends too (delivery is at least once, same webhook-id),
    // but cannot overwrite the outcome the worker that took over recorded.
    const settings = {
      timeoutMs: 500,
      retryScheduleS: DEFAULT_SCHEDULE_S,
      policy: t.ctx.notifications.policy,
      box: t.ctx.notifications.box,
    };
    rx.on(p, { status: 500 });
    expect(await deliver(t.ctx.db, claimed, token, settings, () => t.clock.now())).toBe("stale");
    expect(rx.at(p).map((r) => r.headers["webhook-id"])).toEqual([claimed.id, claimed.id]);
    const [message] = (await deliveries(who, hook.id)).data;
    expect(message).toMatchObject({ status: "Delivered", attemptCount: 1 });
  });

  it("keeps the history of finished messages 120 days (the retention job); unfinished ones stay", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const [ok, down] = [path("kept"), path("kept-down")];
    rx.on(down, { status: 500 });
    const good = await register(who, `${rx.base}${ok}`);
    const bad = await register(who, `${rx.base}${down}`);
    await emit(who);
    await tick();
    const run = async (days: number) => {
      const now = new Date(t.clock.now().getTime() + days * 24 * HOUR_MS).toISOString();
      const res = await t.call({
        method: "POST",
        url: "/api/admin/jobs/retention/run",
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
        payload: { now },
      });
      expect(res.statusCode, res.body).toBe(200);
    };
    await run(119);
    expect((await deliveries(who, good.id)).pagination.total).toBe(1);
    await run(121);
    expect((await deliveries(who, good.id)).pagination.total).toBe(0);
    expect(
      (await t.ctx.db.query("select 1 from notification_attempts where tenant_id = $1", [who.tenantId])).length,
    ).toBe(1);
    // Still Retrying: its history stays until it is finished.
    expect((await deliveries(who, bad.id)).data.map((m: { status: string }) => m.status)).toEqual(["Retrying"]);
  });

  it("delivers from the running worker loop, woken by the emitting transaction's NOTIFY", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const p = path("loop");
    const hook = await register(who, `${rx.base}${p}`);
    await t.ctx.notifications.worker.start();
    try {
      await emit(who);
      const request = await rx.waitFor(p, 5000);
      expect(() => new Webhook(hook.secret).verify(request.body, headersOf(request))).not.toThrow();
    } finally {
      await t.ctx.notifications.worker.stop();
    }
    await expect.poll(async () => (await deliveries(who, hook.id)).data[0]?.status).toBe("Delivered");
  });

  it("records a receiver that hangs as a timeout", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const p = path("hang");
    rx.on(p, "hang");
    const slow = await register(who, `${rx.base}${p}`);
    await emit(who);
    await tick();
    const [message] = (await deliveries(who, slow.id)).data;
    expect(message.attempts[0]).toMatchObject({ status: "failed", errorType: "timeout", responseStatus: null });
    expect(message.status).toBe("Retrying");
  });

  it("never sends a message unsigned: an unreadable secret fails the attempt without a request", async () => {
    t.clock.set(new Date());
    const who = await seedTenancy(t);
    const p = path("unreadable");
    const hook = await register(who, `${rx.base}${p}`);
    // As if sealed under a key that has since left SECRETS_KEY.
    await t.ctx.db.query("update notification_webhooks set secret_enc = $2 where id = $1", [
      hook.id,
      new SecretBox(SecretsKeyring.parse(SecretsKeyring.generate("gone"))).seal(hook.secret),
    ]);
    await emit(who);
    await tick();
    expect(rx.at(p)).toEqual([]);
    const [message] = (await deliveries(who, hook.id)).data;
    expect(message.status).toBe("Retrying");
    expect(message.attempts[0]).toMatchObject({
      status: "failed",
      errorType: "secret_unreadable",
      responseStatus: null,
    });
    expect(message.attempts[0].error).toMatch(/rotate the webhook's secret/);

    // A rotation issues a readable secret and the retry goes out signed with it.
    const rotated = await t.call({
      method: "POST",
      url: `${BASE}/${hook.id}/rotate-secret`,
      headers: { authorization: who.apiKey },
    });
    t.clock.advance(5 * MINUTE_MS);
    await tick();
    const [request] = rx.at(p);
    if (!request) throw new Error("nothing received");
    expect(request.headers["webhook-signature"]).toBe(signatureAt(rotated.json().data.secret, request));
  });
});
