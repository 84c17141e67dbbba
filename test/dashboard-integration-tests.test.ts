/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: postback URL templates use the ${name} placeholder syntax */
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";
import { hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  openDashboardPage,
  type PageLog,
  screenshot,
  signInSettled,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";
import { adsBody, connectAds, type FakeGoogle, startAdsApp, startFakeGoogle } from "./helpers/fake-google.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { setPostback } from "./helpers/source-postbacks.js";
import { WEBHOOK_ENV } from "./helpers/webhooks.js";

// The test buttons of the integration pages, pressed in Chromium against the real service, a
// loopback receiver and the loopback fake of Google: each answer shown (success or the reason),
// axe clean, photographed at 1440 and 390 px.

describe.skipIf(!hasChromium)("dashboard: test buttons of the integrations", () => {
  let google: FakeGoogle;
  let t: TestApp;
  let who: Tenancy;
  let cat: CatalogFixture;
  let rx: Receiver;
  let browser: Browser;
  let origin: string;
  let page: Page;
  let log: PageLog;
  let closeContext: () => Promise<void>;
  const TOKEN = "nt_5a4b3c2d1e0f9a8b7c6d5e4f3a2b1c0d";

  /** Photographs the page at both widths, and checks nothing overflows the narrow one. */
  async function photograph(name: string): Promise<void> {
    await page.setViewportSize({ width: 1440, height: 900 });
    await screenshot(page, `${name}-1440`);
    await page.setViewportSize({ width: 390, height: 844 });
    await screenshot(page, `${name}-390`);
    expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
    await page.setViewportSize({ width: 1024, height: 800 });
  }

  beforeAll(async () => {
    google = await startFakeGoogle();
    t = await startAdsApp(google, { env: { ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: "3000" } });
    who = await seedTenancy(t);
    cat = await seedCatalog(t, who);
    rx = await startReceiver();
    rx.on("/network", { status: 200, body: '{"status":"ok","message":"postback received"}' });
    rx.on("/network-down", { status: 502, body: "Bad gateway: upstream unavailable" });
    rx.on("/ops", { status: 204 });
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
    const opened = await openDashboardPage(browser, origin);
    page = opened.page;
    log = opened.log;
    closeContext = () => opened.context.close();
    await page.goto(`${origin}/sign-in`);
    await signInSettled(page, who);
  }, 120_000);

  afterAll(async () => {
    await closeContext?.();
    await browser?.close();
    await t?.close();
    await rx?.close();
    await google?.close();
  });

  it("sends a test postback and shows the masked request and the network's answer, then a failure", async () => {
    const url = `${rx.base}/network?token=${TOKEN}&cid=\${externalId}&payout={{payout}}`;
    await setPostback(t, who, cat.trafficSourceId, "clickid", { url, payoutShare: 40 });
    await page.goto(`${origin}/catalog/traffic-sources/${cat.trafficSourceId}/postback`);
    const button = page.getByRole("button", { name: "Send test" });
    await button.waitFor({ timeout: WAIT_MS });
    await button.click();
    const result = page.locator(".test-panel .action-result");
    await result.getByText("Success:").waitFor({ timeout: WAIT_MS });
    await expect.poll(() => result.textContent()).toContain("HTTP 200");
    const text = (await result.textContent()) ?? "";
    expect(text).toContain(`${rx.base}/network?token=[redacted]&cid=test_`);
    expect(text).toContain("postback received");
    expect(text).not.toContain(TOKEN);
    expect(rx.at("/network")).toHaveLength(1);
    await expectAccessible(page);
    await photograph("integration-tests-01-postback-sent");

    await setPostback(t, who, cat.trafficSourceId, "clickid", { url: `${rx.base}/network-down?c={{conversionId}}` });
    await page.reload();
    await page.getByRole("button", { name: "Send test" }).click();
    await result.getByText("Failed:").waitFor({ timeout: WAIT_MS });
    expect(await result.textContent()).toContain("The receiver answered 502");
    expect(await result.textContent()).toContain("upstream unavailable");
    await expectAccessible(page);
    await photograph("integration-tests-02-postback-failed");
    expectClean(log);
  });

  it("tests the Google Ads connection: success, then Google's refusal of the account", async () => {
    const client = google.newClient();
    await connectAds(t, who, cat.trafficSourceId, adsBody(client));
    await page.goto(`${origin}/catalog/traffic-sources/${cat.trafficSourceId}/google-ads`);
    const button = page.getByRole("button", { name: "Test connection" });
    await button.waitFor({ timeout: WAIT_MS });
    await button.click();
    const result = page.locator(".test-result");
    await result.getByText("Success:").waitFor({ timeout: WAIT_MS });
    expect(await result.textContent()).toContain("nothing was uploaded");
    await expectAccessible(page);
    await photograph("integration-tests-03-google-ads-ok");

    google.denyAccount("5550001111");
    await connectAds(t, who, cat.trafficSourceId, adsBody(client, { accountId: "555-000-1111" }));
    await page.reload();
    await page.getByRole("button", { name: "Test connection" }).click();
    await result.getByText("Failed:").waitFor({ timeout: WAIT_MS });
    expect(await result.textContent()).toContain("PERMISSION_DENIED");
    expect(await page.content()).not.toContain(client.clientSecret);
    await expectAccessible(page);
    await photograph("integration-tests-04-google-ads-refused");
    expectClean(log);
  });

  it("sends a test message to an operational webhook and shows it delivered, then failed", async () => {
    const created = await t.call({
      method: "POST",
      url: "/api/v1/notifications/webhooks",
      headers: { authorization: who.apiKey },
      payload: { url: `${rx.base}/ops`, description: "Ops channel" },
    });
    expect(created.statusCode, created.body).toBe(201);
    const id = created.json().data.id as string;
    await page.goto(`${origin}/notifications/${id}`);
    const button = page.getByRole("button", { name: "Send test message" });
    await button.waitFor({ timeout: WAIT_MS });
    await button.click();
    const result = page.locator("[aria-labelledby='test-message-title'] .action-result");
    await result.getByText("Delivered:").waitFor({ timeout: WAIT_MS });
    expect(await result.textContent()).toContain("HTTP 204");
    const [got] = rx.at("/ops");
    expect(JSON.parse(got?.body ?? "{}")).toMatchObject({ type: "test" });
    expect(got?.headers["webhook-signature"]).toMatch(/^v1,/);
    await expectAccessible(page);
    await photograph("integration-tests-05-webhook-delivered");

    await t.call({
      method: "PATCH",
      url: `/api/v1/notifications/webhooks/${id}`,
      headers: { authorization: who.apiKey },
      payload: { url: `${rx.base}/network-down` },
    });
    await page.reload();
    await page.getByRole("button", { name: "Send test message" }).click();
    await result.getByText("Failed:").waitFor({ timeout: WAIT_MS });
    expect(await result.textContent()).toContain("The receiver answered 502");
    await expectAccessible(page);
    await photograph("integration-tests-06-webhook-failed");
    expectClean(log);
  });
});
