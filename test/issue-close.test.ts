import { Webhook } from "standardwebhooks";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  cancelWaitingEvents,
  convert,
  createHook,
  type Issue,
  issuesOf,
  patchHook,
  receiverPaths,
  startWebhookTestApp,
  WEBHOOKS_API,
  withId,
} from "./helpers/webhooks.js";

// Issues close when their cause is gone (a failing webhook deleted or disabled), and a person can
// close one by hand with a reason, kept as closedReason and sent with `issue.closed`.

let t: TestApp;
let rx: Receiver;

beforeAll(async () => {
  t = await startWebhookTestApp();
  rx = await startReceiver();
});
afterAll(async () => {
  await t?.close();
  await rx?.close();
});
afterEach(() => cancelWaitingEvents(t));

const path = receiverPaths("/close");

/** A webhook whose receiver answers 503, after one failed delivery: its failure issue is open. */
async function failingHook(who: Tenancy, name: string): Promise<{ hookId: string; issue: Issue }> {
  const p = path(name);
  rx.on(p, { status: 503 });
  const hook = await createHook(t, who.apiKey, { url: withId(rx, p) });
  await convert(t, who.apiKey);
  await t.ctx.delivery.tick();
  const issue = (await issuesOf(t, who.apiKey, "outgoing_webhook_failed")).find((i) => i.subject.id === hook.id);
  expect(issue).toMatchObject({ status: "open", closedReason: null });
  return { hookId: hook.id, issue: issue as Issue };
}

const getIssue = (who: Tenancy, id: string) =>
  t.call({ method: "GET", url: `/api/v1/issues/${id}`, headers: { authorization: who.apiKey } });

const close = (authorization: string, id: string, payload: unknown) =>
  t.call({ method: "POST", url: `/api/v1/issues/${id}/close`, headers: { authorization }, payload: payload as object });

describe("automatic close", () => {
  it("closes the failure issue when its webhook is deleted", async () => {
    const who = await seedTenancy(t);
    const { hookId, issue } = await failingHook(who, "deleted");
    const res = await t.call({
      method: "DELETE",
      url: `${WEBHOOKS_API}/settings/${hookId}`,
      headers: { authorization: who.apiKey },
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    const after = (await getIssue(who, issue.id)).json().data;
    expect(after).toMatchObject({
      status: "closed",
      closedReason: null,
      details: { resolution: "The webhook was deleted" },
    });
    expect(after.closedAt).toEqual(expect.any(String));
  });

  it("closes the failure issue when its webhook is disabled", async () => {
    const who = await seedTenancy(t);
    const { hookId, issue } = await failingHook(who, "disabled");
    await patchHook(t, who.apiKey, hookId, { status: "Disabled" });
    expect((await getIssue(who, issue.id)).json().data).toMatchObject({
      status: "closed",
      details: { resolution: "The webhook was disabled" },
    });
  });
});

describe("POST /issues/{id}/close", () => {
  it("closes with a reason, sends issue.closed, then answers 409", async () => {
    const who = await seedTenancy(t);
    const ops = path("ops");
    const sub = await t.call({
      method: "POST",
      url: "/api/v1/notifications/webhooks",
      headers: { authorization: who.apiKey },
      payload: { url: `${rx.base}${ops}`, events: ["issue.closed"] },
    });
    expect(sub.statusCode, sub.body).toBe(201);
    const verifier = new Webhook(sub.json().data.secret);
    const { issue } = await failingHook(who, "by-hand");

    const res = await close(who.bearer, issue.id, { reason: "  The receiver is being replaced  " });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({
      id: issue.id,
      status: "closed",
      closedReason: "The receiver is being replaced",
      closedAt: t.clock.now().toISOString(),
    });
    expect((await getIssue(who, issue.id)).json().data.closedReason).toBe("The receiver is being replaced");

    while ((await t.ctx.notifications.worker.tick()) > 0);
    const received = rx.at(ops);
    expect(received).toHaveLength(1);
    const request = received[0];
    if (!request) throw new Error("no issue.closed received");
    const headers = {
      "webhook-id": String(request.headers["webhook-id"]),
      "webhook-timestamp": String(request.headers["webhook-timestamp"]),
      "webhook-signature": String(request.headers["webhook-signature"]),
    };
    const message = verifier.verify(request.body, headers) as { type: string; data: Record<string, unknown> };
    expect(message).toMatchObject({
      type: "issue.closed",
      data: { id: issue.id, status: "closed", closedReason: "The receiver is being replaced" },
    });

    const again = await close(who.apiKey, issue.id, { reason: "again" });
    expect(again.statusCode, again.body).toBe(409);
  });

  it("opens again, without the reason, when the webhook fails after a close by hand", async () => {
    const who = await seedTenancy(t);
    const { issue } = await failingHook(who, "fails-again");
    expect((await close(who.bearer, issue.id, { reason: "Looked into it" })).statusCode).toBe(200);
    // The cause was not gone: the next failed delivery raises the failure issue again.
    await convert(t, who.apiKey);
    await t.ctx.delivery.tick();
    const open = (await issuesOf(t, who.apiKey, "outgoing_webhook_failed")).filter(
      (i) => i.subject.id === issue.subject.id && i.status === "open",
    );
    expect(open).toHaveLength(1);
    expect(open[0]).toMatchObject({ closedReason: null, closedAt: null });
  });

  it("refuses another tenant's issue (404), without the permission (403) and a bad reason (400)", async () => {
    const who = await seedTenancy(t);
    const { issue } = await failingHook(who, "refusals");
    const other = await seedTenancy(t);
    expect((await close(other.apiKey, issue.id, { reason: "not mine" })).statusCode).toBe(404);
    expect((await close(who.apiKey, "iss_nosuchissue", { reason: "none" })).statusCode).toBe(404);

    const reader = await seedTenancy(t, { permissions: ["webhooks.read"], key: { scopes: ["webhooks.read"] } });
    expect((await close(reader.bearer, issue.id, { reason: "no right" })).statusCode).toBe(403);

    for (const payload of [{}, { reason: "" }, { reason: "   " }, { reason: "x".repeat(501) }]) {
      const res = await close(who.apiKey, issue.id, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(res.body).toContain("reason");
    }
    expect((await getIssue(who, issue.id)).json().data.status).toBe("open");
  });
});
