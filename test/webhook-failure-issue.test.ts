import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HOUR_MS } from "../src/platform/durations.js";
import { startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { convert, createHook, issuesOf, mailsAbout, seedTenantWithCatalog, WEBHOOK_ENV } from "./helpers/webhooks.js";

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let receiver: Receiver;
let webhookId: string;

beforeAll(async () => {
  receiver = await startReceiver();
  t = await startTestApp({ env: WEBHOOK_ENV });
  ({ who, cat } = await seedTenantWithCatalog(t));
  webhookId = (await createHook(t, who, { name: "Ads receiver", url: `${receiver.base}/pb?c={{clickId}}` })).id;
});
afterAll(async () => {
  await t.close();
  await receiver.close();
});

async function convertAClick(): Promise<void> {
  const clickId = await clickThrough(t, cat);
  await convert(t, who, { type: "Signup", clickId });
}

const failureIssues = () => issuesOf(t, who, "outgoing_webhook_failed");

async function mails(): Promise<string[]> {
  return (await mailsAbout(t, who.tenantId, "Outgoing Webhook Failed")).map((m) => m.subject);
}

describe("'Outgoing Webhook Failed' issue", () => {
  it("opens (and mails) on a failed attempt, follows the latest error type, closes on the next 2xx", async () => {
    expect(await failureIssues()).toEqual([]);

    receiver.on("/pb", { status: 503 });
    await convertAClick();
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
