/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiToken } from "../src/features/api-tokens/index.js";
import { emitNotification } from "../src/features/notifications/index.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type Received, type Receiver, startReceiver } from "./helpers/receiver.js";

// Every operational event type, caused by the real state change that emits it, as a registered
// receiver gets it (signature verified with the public library).

const NOTIFY = "/api/v1/notifications/webhooks";
const OUTGOING = "/api/v1/conversions/outgoing/webhooks/settings";

interface Message {
  type: string;
  timestamp: string;
  data: Record<string, unknown>;
}

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

/** A tenant with one operational webhook (optionally filtered) on its own receiver path. */
async function subscribed(events?: string[]): Promise<{ who: Tenancy; read: () => Promise<Message[]> }> {
  const who = await seedTenancy(t);
  const path = `/ops-${++paths}`;
  const res = await t.call({
    method: "POST",
    url: NOTIFY,
    headers: { authorization: who.apiKey },
    payload: { url: `${rx.base}${path}`, ...(events ? { events } : {}) },
  });
  expect(res.statusCode, res.body).toBe(201);
  const verifier = new Webhook(res.json().data.secret);
  let seen = 0;
  /** Delivers what is due and answers the messages received since the last read, verified. */
  const read = async () => {
    // The receiver checks timestamps against real time; the test clock may be days away.
    while ((await t.ctx.notifications.worker.tick()) > 0);
    const fresh = rx.at(path).slice(seen);
    seen += fresh.length;
    return fresh.map((request) => verified(verifier, request));
  };
  return { who, read };
}

function verified(verifier: Webhook, request: Received): Message {
  const headers = {
    "webhook-id": String(request.headers["webhook-id"]),
    "webhook-timestamp": String(request.headers["webhook-timestamp"]),
    "webhook-signature": String(request.headers["webhook-signature"]),
  };
  const timestamp = new Date(Number(headers["webhook-timestamp"]) * 1000);
  expect(headers["webhook-signature"]).toBe(verifier.sign(headers["webhook-id"], timestamp, request.body));
  return JSON.parse(request.body) as Message;
}

const types = (messages: Message[]) => messages.map((m) => m.type);

async function outgoingWebhook(who: Tenancy, url: string): Promise<string> {
  const res = await t.call({
    method: "POST",
    url: OUTGOING,
    headers: { authorization: who.apiKey },
    payload: { name: "Ads receiver", url, method: "GET" },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id;
}

async function convert(who: Tenancy): Promise<void> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: who.apiKey },
    payload: { type: "Signup" },
  });
  expect(res.statusCode, res.body).toBe(201);
}

describe("issue.opened and issue.closed", () => {
  it("follow the 'Outgoing Webhook Failed' issue: opened on a failed postback, closed by the next 2xx", async () => {
    t.clock.set(new Date());
    const { who, read } = await subscribed();
    rx.on("/pb-failing", { status: 503 });
    const webhookId = await outgoingWebhook(who, `${rx.base}/pb-failing?c={{conversionId}}`);
    await convert(who);
    await t.ctx.delivery.tick();
    const [opened, ...more] = await read();
    expect(more).toEqual([]);
    expect(opened).toMatchObject({
      type: "issue.opened",
      timestamp: t.clock.now().toISOString(),
      data: {
        kind: "outgoing_webhook_failed",
        severity: "error",
        status: "open",
        subject: { type: "outgoing_webhook", id: webhookId, name: "Ads receiver" },
        details: { errorType: "http_status" },
        closedAt: null,
      },
    });
    expect(String(opened?.data.id)).toMatch(/^iss_/);

    // Another failure updates the open issue: nothing new to announce.
    t.clock.advance(2 * HOUR_MS);
    await t.ctx.delivery.tick();
    expect(await read()).toEqual([]);

    rx.on("/pb-failing", { status: 200 });
    t.clock.advance(2 * HOUR_MS);
    await t.ctx.delivery.tick();
    const [closed, ...rest] = await read();
    expect(rest).toEqual([]);
    expect(closed).toMatchObject({
      type: "issue.closed",
      data: { id: opened?.data.id, status: "closed", closedAt: t.clock.now().toISOString() },
    });
  });
});

describe("api_token.expiring and api_token.expired", () => {
  // Near the real date, so that no other key of the file (each valid for a year) is touched.
  const day0 = Math.floor(Date.now() / DAY_MS) * DAY_MS;
  const at = (days: number, hours = 8) => new Date(day0 + days * DAY_MS + hours * HOUR_MS).toISOString();

  async function runExpiryJob(now: string) {
    t.clock.set(now);
    const res = await t.call({
      method: "POST",
      url: "/api/admin/jobs/api-token-expiry/run",
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { now },
    });
    expect(res.statusCode, res.body).toBe(200);
  }

  async function keyOf(who: Tenancy, name: string, expirationDate: string) {
    const key = await createApiToken(
      t.ctx.db,
      who.tenantId,
      { name, expirationDate: new Date(expirationDate) },
      { type: "user", id: who.userId, name: "Person" },
      t.clock.now(),
    );
    return { id: key.id, name, expirationDate };
  }

  it("announce the key 7 days before expiry and again once it has expired, not on the escalation between", async () => {
    t.clock.set(at(0));
    const { who, read } = await subscribed(["api_token.expiring", "api_token.expired"]);
    const token = await keyOf(who, "Nightly export", at(8, 12));

    await runExpiryJob(at(0));
    expect(await read()).toEqual([]);

    await runExpiryJob(at(1));
    expect(await read()).toEqual([{ type: "api_token.expiring", timestamp: at(1), data: token }]);
    await runExpiryJob(at(2));
    // Inside the last day the issue escalates: that is no new event for the key.
    await runExpiryJob(at(8));
    expect(await read()).toEqual([]);

    await runExpiryJob(at(9));
    expect(await read()).toEqual([{ type: "api_token.expired", timestamp: at(9), data: token }]);
    await runExpiryJob(at(10));
    expect(await read()).toEqual([]);
  });

  it("announce only the expiry for a key first seen already expired", async () => {
    t.clock.set(at(10));
    const { who, read } = await subscribed(["api_token.expiring", "api_token.expired"]);
    const token = await keyOf(who, "Forgotten key", at(12, 0));
    await runExpiryJob(at(13));
    expect(await read()).toEqual([{ type: "api_token.expired", timestamp: at(13), data: token }]);
  });

  it("come with issue.opened for the expiry issue when the filter takes every type", async () => {
    t.clock.set(at(13));
    const { who, read } = await subscribed();
    await keyOf(who, "Unfiltered key", at(20, 0));
    await runExpiryJob(at(14));
    const messages = await read();
    expect(types(messages).sort()).toEqual(["api_token.expiring", "issue.opened"]);
    expect(messages.find((m) => m.type === "issue.opened")?.data).toMatchObject({
      kind: "api_token_expiring",
      severity: "warning",
      subject: { type: "api_token", name: "Unfiltered key" },
    });
  });
});

describe("outgoing_webhook.suspended and outgoing_webhook.enabled", () => {
  it("announce a webhook suspended for an unusable URL and re-enabled by the caller", async () => {
    t.clock.set(new Date());
    const { who, read } = await subscribed(["outgoing_webhook.suspended", "outgoing_webhook.enabled"]);
    const webhookId = await outgoingWebhook(who, `${rx.base}/pb-suspended`);
    // Saved before save-time validation existed: only SQL can write it now.
    await t.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1", [webhookId, "${clickId}"]);
    await convert(who);
    await t.ctx.delivery.tick();
    const [suspended, ...more] = await read();
    expect(more).toEqual([]);
    expect(suspended).toMatchObject({
      type: "outgoing_webhook.suspended",
      data: { id: webhookId, name: "Ads receiver", status: "Suspended" },
    });
    expect(String(suspended?.data.statusReason)).toMatch(/Suspended/);

    const res = await t.call({
      method: "PATCH",
      url: `${OUTGOING}/${webhookId}`,
      headers: { authorization: who.apiKey },
      payload: { status: "Enabled", url: `${rx.base}/pb-suspended` },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(await read()).toEqual([
      {
        type: "outgoing_webhook.enabled",
        timestamp: t.clock.now().toISOString(),
        data: { id: webhookId, name: "Ads receiver", status: "Enabled", statusReason: null },
      },
    ]);
  });

  it("say nothing when the caller moves a webhook between Enabled and Disabled", async () => {
    const { who, read } = await subscribed();
    const webhookId = await outgoingWebhook(who, `${rx.base}/pb-toggled`);
    for (const status of ["Disabled", "Enabled", "Disabled", "Enabled"]) {
      const res = await t.call({
        method: "PATCH",
        url: `${OUTGOING}/${webhookId}`,
        headers: { authorization: who.apiKey },
        payload: { status },
      });
      expect(res.statusCode).toBe(200);
    }
    expect(await read()).toEqual([]);
  });
});

describe("emission in the state change's transaction", () => {
  it("writes nothing when the transaction that emitted rolls back", async () => {
    const { who, read } = await subscribed();
    await expect(
      t.ctx.db.transaction(async (tx) => {
        await emitNotification(tx, who.tenantId, "issue.opened", { id: "iss_rolled_back" }, t.clock.now());
        throw new Error("the state change failed");
      }),
    ).rejects.toThrow("the state change failed");
    const rows = await t.ctx.db.query("select 1 from notification_messages where tenant_id = $1", [who.tenantId]);
    expect(rows).toEqual([]);
    expect(await read()).toEqual([]);
  });

  it("writes nothing for a tenant without webhooks, and one message per matching webhook otherwise", async () => {
    const lonely = await seedTenancy(t);
    await t.ctx.db.transaction((tx) => emitNotification(tx, lonely.tenantId, "issue.opened", {}, t.clock.now()));
    expect(await t.ctx.db.query("select 1 from notification_messages where tenant_id = $1", [lonely.tenantId])).toEqual(
      [],
    );
    const { who } = await subscribed();
    for (const events of [["issue.opened"], ["issue.closed"], []]) {
      const res = await t.call({
        method: "POST",
        url: NOTIFY,
        headers: { authorization: who.apiKey },
        payload: { url: `${rx.base}/ops-extra`, events },
      });
      expect(res.statusCode).toBe(201);
    }
    await t.ctx.db.transaction((tx) => emitNotification(tx, who.tenantId, "issue.opened", {}, t.clock.now()));
    const rows = await t.ctx.db.query<{ n: number }>(
      "select count(*)::int as n from notification_messages where tenant_id = $1",
      [who.tenantId],
    );
    // The unfiltered first webhook, the issue.opened one and the second unfiltered one.
    expect(rows[0]?.n).toBe(3);
  });
});
