import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";

const HOUR_MS = 3_600_000;
let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let receiver: Receiver;
let webhookId: string;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestApp({ env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_TIMEOUT_MS: "500" } });
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  const created = await t.call({
    method: "POST",
    url: "/api/v1/conversions/outgoing/webhooks/settings",
    headers: { authorization: who.apiKey },
    payload: { name: "Ads receiver", url: `${receiver.base}/pb?c={{clickId}}`, method: "GET" },
  });
  expect(created.statusCode, created.body).toBe(201);
  webhookId = created.json().data.id;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function convert(): Promise<void> {
  const clickId = await clickThrough(t, cat);
  const res = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: who.apiKey },
    payload: { type: "Signup", clickId },
  });
  expect(res.statusCode, res.body).toBe(201);
}

async function failureIssues() {
  const res = await t.call({
    method: "GET",
    url: "/api/v1/issues?kind=outgoing_webhook_failed",
    headers: { authorization: who.apiKey },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as {
    status: string;
    subject: { id: string; name: string };
    details: { errorType: string; resolution?: string };
  }[];
}

async function mails(): Promise<string[]> {
  const rows = await t.testDb.db.query<{ subject: string }>(
    "select subject from mail_outbox where tenant_id = $1 and subject like '%Outgoing Webhook Failed%' order by created_at",
    [who.tenantId],
  );
  return rows.map((r) => r.subject);
}

describe("'Outgoing Webhook Failed' issue", () => {
  it("opens (and mails) on a failed attempt, follows the latest error type, closes on the next 2xx", async () => {
    expect(await failureIssues()).toEqual([]);

    receiver.on("/pb", { status: 503 });
    await convert();
    await t.ctx.delivery.tick();
    let [issue] = await failureIssues();
    expect(issue).toMatchObject({ status: "open", subject: { id: webhookId, name: "Ads receiver" } });
    expect(issue?.details.errorType).toBe("http_status");
    expect(await mails()).toEqual([expect.stringMatching(/^\[error\] Opened: Outgoing Webhook Failed: Ads receiver/)]);

    // The retry hangs: still one issue, now naming the timeout; no second mail.
    receiver.on("/pb", "hang");
    t.clock.advance(2 * HOUR_MS);
    await t.ctx.delivery.tick();
    const issues = await failureIssues();
    expect(issues).toHaveLength(1);
    expect(issues[0]?.details.errorType).toBe("timeout");
    expect(await mails()).toHaveLength(1);

    receiver.on("/pb", { status: 200 });
    t.clock.advance(2 * HOUR_MS);
    await t.ctx.delivery.tick();
    [issue] = await failureIssues();
    expect(issue?.status).toBe("closed");
    expect(issue?.details.resolution).toMatch(/answered 200/);
    expect(await mails()).toHaveLength(2);
  });
});
