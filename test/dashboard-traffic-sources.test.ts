import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SourcePostbackWorker } from "../src/features/source-postbacks/index.js";
import { sourcePostbackWorker } from "../src/features/source-postbacks/index.js";
import {
  actionsOf,
  parseOffsetSearch,
  parsePostbackSearch,
  parseUploadSearch,
  payoutShareOf,
} from "../web/src/pages/traffic-sources/search.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";
import { hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  addPerson,
  documentText,
  dropRefusals,
  expectAccessible,
  expectClean,
  openDashboardPage,
  type PageLog,
  screenshot,
  signInSettled,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";
import { type FakeGoogle, newGclid, runUpload, startAdsApp, startFakeGoogle } from "./helpers/fake-google.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { clickOn, postbackAttempts, postbacksOf } from "./helpers/source-postbacks.js";
import { recordConversion, WEBHOOK_ENV } from "./helpers/webhooks.js";

// A traffic source's integration pages end to end: the real service on loopback, a loopback
// receiver standing for the ad network, a loopback fake of Google (OAuth and Data Manager), and
// Chromium. The postback worker is the feature's own, ticked by hand; uploads run as the job.

const NETWORK = "/network";

describe("traffic source pages: URL state and form values", () => {
  it("reads the postbacks list's filters from the address, dropping what the API would refuse", () => {
    expect(
      parsePostbackSearch({ status: "Delivered", conversionId: " cnv_1 ", dateFrom: "2026-01-02", offset: "50" }),
    ).toEqual({ status: "Delivered", conversionId: "cnv_1", dateFrom: "2026-01-02", offset: 50 });
    // Held is a webhook status only; a from after the to is dropped; offset 0 is the first page.
    expect(parsePostbackSearch({ status: "Held", dateFrom: "2026-02-01", dateTo: "2026-01-01", offset: 0 })).toEqual(
      {},
    );
    expect(parsePostbackSearch({ conversionId: "x".repeat(101), dateTo: "2026-13-01" })).toEqual({});
  });

  it("reads the uploads list's status and page, and an attempts page", () => {
    expect(parseUploadSearch({ status: "Partly", offset: 100 })).toEqual({ status: "Partly", offset: 100 });
    expect(parseUploadSearch({ status: "sent", offset: -1 })).toEqual({});
    expect(parseOffsetSearch({ offset: "20" })).toEqual({ offset: 20 });
  });

  it("turns the payout share and conversion actions into what the API takes", () => {
    expect(payoutShareOf("")).toBeNull();
    expect(payoutShareOf(" 12,5 ")).toBe(12.5);
    expect(payoutShareOf("half")).toBeUndefined();
    expect(actionsOf({ Signup: " 111 ", Deposit: "", Qualifier: "  " })).toEqual({ Signup: "111" });
  });
});

describe.skipIf(!hasChromium)("dashboard: traffic source postback and Google Ads", () => {
  let google: FakeGoogle;
  let t: TestApp;
  let who: Tenancy;
  let cat: CatalogFixture;
  let rx: Receiver;
  let worker: SourcePostbackWorker;
  let browser: Browser;
  let origin: string;
  let page: Page;
  let log: PageLog;
  let closeContext: () => Promise<void>;
  let postbackId = "";

  const base = () => `/catalog/traffic-sources/${cat.trafficSourceId}`;
  const heading = (name: string) =>
    page.getByRole("heading", { level: 1, name: `Source: ${name}` }).waitFor({ timeout: WAIT_MS });
  const notice = (text: string | RegExp) => page.locator(".action-result").getByText(text);
  const api = async (url: string) => {
    const res = await t.call({ method: "GET", url, headers: { authorization: who.bearer } });
    return { status: res.statusCode, body: res.json() };
  };
  /** The one refused save a step provokes on purpose: Chromium logs its 400 too. */
  const forgetRefusals = (status: number, path: string) => {
    dropRefusals(log, status, path);
    log.ownFailures = log.ownFailures.filter((f) => !(f.includes(path) && f.endsWith(`HTTP ${status}`)));
  };

  beforeAll(async () => {
    google = await startFakeGoogle();
    // Clicks are held in memory until a conversion needs them; a busy machine may answer slowly.
    t = await startAdsApp(google, {
      env: { ...WEBHOOK_ENV, WEBHOOK_TIMEOUT_MS: "10000" },
      app: { clicks: { intervalMs: 3_600_000 } },
    });
    who = await seedTenancy(t);
    cat = await seedCatalog(t, who);
    rx = await startReceiver();
    rx.on(NETWORK, { status: 200, body: "ok" });
    worker = sourcePostbackWorker({ db: t.ctx.db, clock: t.ctx.clock, log: t.app.log, config: t.ctx.config });
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

  it("saves the postback setting from the source's page, the API's refusal next to its field", {
    timeout: 120_000,
  }, async () => {
    await page.goto(`${origin}/catalog/traffic-sources`);
    const link = page.getByRole("link", { name: "Postback of Source" });
    await link.waitFor({ timeout: WAIT_MS });
    await screenshot(page, "traffic-sources-00-list");
    await expectAccessible(page);
    await link.click();
    await heading("Postback");
    await screenshot(page, "traffic-sources-01-postback-empty");
    await expectAccessible(page);

    await page.getByLabel("Click id parameter").fill("clickid");
    const url = page.getByLabel("Postback URL");
    // An unknown placeholder: the API's 400 names it, shown under the URL.
    await url.fill(`${rx.base}${NETWORK}?x={{noSuchName}}`);
    await page.getByRole("button", { name: "Save postback" }).click();
    const urlField = page.locator(".field").filter({ has: url });
    await urlField
      .getByRole("alert")
      .getByText(/noSuchName/)
      .waitFor({ timeout: WAIT_MS });
    expect(await url.getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "traffic-sources-02-postback-refused");
    await expectAccessible(page);
    forgetRefusals(400, `/api/v1/traffic-sources/${cat.trafficSourceId}`);

    // The placeholder help inserts the source's own names too.
    await url.fill(`${rx.base}${NETWORK}?ext=`);
    await page.getByText("Placeholders", { exact: true }).click();
    await page.getByRole("button", { name: "Insert externalId" }).click();
    await url.press("End");
    await url.pressSequentially("&p=");
    await page.getByRole("button", { name: "Insert payout" }).click();
    await url.press("End");
    await url.pressSequentially("&c=");
    await page.getByRole("button", { name: "Insert conversionId" }).click();
    const template = `${rx.base}${NETWORK}?ext={{externalId}}&p={{payout}}&c={{conversionId}}`;
    expect(await url.inputValue()).toBe(template);
    await page.getByRole("checkbox", { name: "Deposit", exact: true }).check();
    await page.getByLabel("Payout share (%)").fill("50");
    const statusChanges = page.getByRole("checkbox", { name: "Send status changes" });
    expect(await statusChanges.isChecked()).toBe(false);
    await statusChanges.check();
    await page.getByRole("button", { name: "Save postback" }).click();
    await notice("Saved.").waitFor({ timeout: WAIT_MS });

    const saved = (await api(`/api/v1/traffic-sources/${cat.trafficSourceId}`)).body.data;
    expect(saved.clickIdParam).toBe("clickid");
    expect(saved.postback).toEqual({
      url: template,
      conversionTypes: ["Deposit"],
      payoutShare: 50,
      enabled: true,
      statusChanges: true,
    });
    // The form shows what was saved, after a reload too.
    await page.reload();
    await heading("Postback");
    await expect.poll(() => page.getByLabel("Postback URL").inputValue(), { timeout: WAIT_MS }).toBe(template);
    expect(await page.getByLabel("Click id parameter").inputValue()).toBe("clickid");
    expect(await page.getByRole("checkbox", { name: "Deposit", exact: true }).isChecked()).toBe(true);
    expect(await page.getByRole("checkbox", { name: "Signup" }).isChecked()).toBe(false);
    expect(await statusChanges.isChecked()).toBe(true);
    await screenshot(page, "traffic-sources-03-postback-saved");
    expectClean(log);
  });

  it("lists the postback a conversion sent, with its attempt, and resends it", { timeout: 120_000 }, async () => {
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?clickid=net-777");
    const deposit = await recordConversion(t, who.apiKey, { type: "Deposit", clickId, value: "40", currency: "EUR" });
    // A type the postback is not set for sends nothing.
    await recordConversion(t, who.apiKey, { type: "Signup", clickId });
    expect(await worker.tick()).toBe(1);
    const [sent] = rx.at(NETWORK);
    expect(sent?.query.get("ext")).toBe("net-777");
    expect(sent?.query.get("p")).toBe("20");
    expect(sent?.query.get("c")).toBe(deposit.id);
    const [listed] = await postbacksOf(t, who.apiKey, cat.trafficSourceId);
    expect(listed).toMatchObject({ conversionId: deposit.id, status: "Delivered", attempts: 1 });
    postbackId = listed?.id ?? "";

    await page
      .getByRole("navigation", { name: "Traffic source" })
      .getByRole("link", { name: "Postbacks sent" })
      .click();
    await heading("Postbacks sent");
    const row = page.getByRole("row").filter({ hasText: postbackId });
    await row.getByText("Delivered").waitFor({ timeout: WAIT_MS });
    expect(await row.textContent()).toContain(deposit.id);
    expect(await page.getByRole("row").count()).toBe(2);
    await screenshot(page, "traffic-sources-04-postbacks");
    await expectAccessible(page);

    // A filter lives in the address; nothing failed, so the list is empty.
    await page.getByLabel("Status").selectOption("Failed");
    await page.getByRole("button", { name: "Apply" }).click();
    await page.getByText("No postback matches these filters.").waitFor({ timeout: WAIT_MS });
    expect(new URL(page.url()).searchParams.get("status")).toBe("Failed");
    await page.getByRole("link", { name: "Clear filters" }).click();
    await row.waitFor({ timeout: WAIT_MS });

    await row.getByRole("link", { name: postbackId }).click();
    await heading(`Postback ${postbackId}`);
    const [attempt] = await postbackAttempts(t, who.apiKey, cat.trafficSourceId, postbackId);
    expect(attempt?.response?.status).toBe(200);
    await page.getByRole("heading", { level: 3, name: /Attempt 1: HTTP 200/ }).waitFor({ timeout: WAIT_MS });
    expect(await page.locator(".attempt").first().textContent()).toContain(templateOf(rx));
    await screenshot(page, "traffic-sources-05-attempts");
    await expectAccessible(page);

    await page.getByRole("button", { name: "Resend" }).click();
    await notice("Queued for a new attempt.").waitFor({ timeout: WAIT_MS });
    expect(await worker.tick()).toBe(1);
    // The page follows the resend until its attempt is listed.
    await page.getByRole("heading", { level: 3, name: /Attempt 2: HTTP 200/ }).waitFor({ timeout: WAIT_MS });
    expect(rx.at(NETWORK)).toHaveLength(2);
    await screenshot(page, "traffic-sources-06-resent");
    expectClean(log);
  });

  it("saves a Google Ads integration without ever showing its secrets, lists its upload, deletes it", {
    timeout: 120_000,
  }, async () => {
    const client = google.newClient();
    await page
      .getByRole("navigation", { name: "Traffic source" })
      .getByRole("link", { name: "Google Ads uploads" })
      .click();
    await heading("Google Ads uploads");
    await page.getByText("No uploads: this source has no Google Ads integration.").waitFor({ timeout: WAIT_MS });
    await page.getByRole("link", { name: "Set one up" }).click();
    await heading("Google Ads");
    await page.getByRole("heading", { level: 2, name: "Set up Google Ads" }).waitFor({ timeout: WAIT_MS });
    await screenshot(page, "traffic-sources-07-google-ads-empty");
    await expectAccessible(page);

    const form = page.getByRole("form", { name: "Google Ads integration" });
    await form.getByLabel("Customer account id").fill("12-34");
    await form.getByLabel("OAuth client id").fill(client.clientId);
    await form.getByLabel("OAuth client secret").fill(client.clientSecret);
    await form.getByLabel("Refresh token").fill(client.refreshToken);
    await form.getByLabel("Deposit", { exact: true }).fill("333");
    await form.getByRole("button", { name: "Save integration" }).click();
    const account = page.locator(".field").filter({ has: page.getByLabel("Customer account id") });
    await account
      .getByRole("alert")
      .getByText(/is not in the accepted form/)
      .waitFor({ timeout: WAIT_MS });
    await screenshot(page, "traffic-sources-08-google-ads-refused");
    forgetRefusals(400, "/google-ads");

    await form.getByLabel("Customer account id").fill("123-456-7890");
    await form.getByLabel("Ad user data").selectOption("CONSENT_GRANTED");
    await form.getByRole("button", { name: "Save integration" }).click();
    await notice(/The client secret and refresh token are stored/).waitFor({ timeout: WAIT_MS });
    const stored = page.getByRole("region", { name: "Saved integration" });
    await stored.getByText(client.clientId).waitFor({ timeout: WAIT_MS });
    expect(await stored.textContent()).toContain("Stored, never shown");
    expect(await stored.textContent()).toContain("Deposit: 333");
    // Write-only: neither secret is anywhere in the page or the browser's storage after saving.
    const text = await documentText(page);
    expect(text).not.toContain(client.clientSecret);
    expect(text).not.toContain(client.refreshToken);
    expect(await form.getByLabel("OAuth client secret").inputValue()).toBe("");
    expect(await form.getByLabel("Refresh token").inputValue()).toBe("");
    await screenshot(page, "traffic-sources-09-google-ads-saved");
    await expectAccessible(page);

    // A change that leaves the secrets empty keeps them: the next upload still signs in.
    await form.getByLabel("Login account id").fill("999-888-7777");
    await form.getByRole("button", { name: "Save integration" }).click();
    await stored.getByText("9998887777").waitFor({ timeout: WAIT_MS });
    // PUT replaces the record: what the form did not change (consent, actions) is sent back as stored.
    const record = (await api(`/api/v1/traffic-sources/${cat.trafficSourceId}/google-ads`)).body.data;
    expect(record).toMatchObject({
      accountId: "1234567890",
      loginAccountId: "9998887777",
      conversionActions: { Deposit: "333" },
      consent: { adUserData: "CONSENT_GRANTED" },
      credentials: { clientId: client.clientId },
    });
    expect(await stored.textContent()).toContain("Ad user data: granted");

    // A conversion of a click with a gclid, uploaded by the job: its upload and item are listed.
    const gclid = newGclid();
    const clickId = await clickOn(t, cat, cat.trafficSourceId, `?gclid=${gclid}`);
    const deposit = await recordConversion(t, who.apiKey, { type: "Deposit", clickId, value: "12", currency: "EUR" });
    await runUpload(t);
    expect(google.accepted.size).toBe(1);
    await page
      .getByRole("navigation", { name: "Traffic source" })
      .getByRole("link", { name: "Google Ads uploads" })
      .click();
    await heading("Google Ads uploads");
    const row = page.getByRole("row").filter({ hasText: "gup_" });
    await row.getByText("Sent").waitFor({ timeout: WAIT_MS });
    expect(await row.textContent()).toContain("HTTP 200");
    await screenshot(page, "traffic-sources-10-uploads");
    await expectAccessible(page);
    await row.getByRole("link", { name: /^gup_/ }).click();
    await heading("Google Ads upload");
    const item = page.getByRole("row").filter({ hasText: deposit.id });
    await item.getByText("accepted").waitFor({ timeout: WAIT_MS });
    expect(await item.textContent()).toContain(gclid);
    await screenshot(page, "traffic-sources-11-upload");
    await expectAccessible(page);

    // Delete, after a confirmation: the form offers a new setup.
    await page
      .getByRole("navigation", { name: "Traffic source" })
      .getByRole("link", { name: "Google Ads", exact: true })
      .click();
    await heading("Google Ads");
    await page.getByRole("button", { name: "Delete integration" }).click();
    await page.getByRole("dialog").getByRole("button", { name: "Delete integration" }).click();
    await notice(/was deleted/).waitFor({ timeout: WAIT_MS });
    await page.getByRole("heading", { level: 2, name: "Set up Google Ads" }).waitFor({ timeout: WAIT_MS });
    expect((await api(`/api/v1/traffic-sources/${cat.trafficSourceId}/google-ads`)).status).toBe(404);
    // The page asks for the integration and reads 404 as "not set up": Chromium logs each one.
    forgetRefusals(404, "/google-ads");
    expectClean(log);
  });

  it("offers a reader no change and no resend", { timeout: 120_000 }, async () => {
    // Reads the catalog and the webhooks' side of it, may change neither.
    const reader = await addPerson(t, who.tenantId, {
      name: "Reader",
      permissions: ["catalog.read", "reports.read", "webhooks.read"],
    });
    const other = await openDashboardPage(browser, origin);
    try {
      await other.page.goto(`${origin}/sign-in`);
      await signInSettled(other.page, reader);
      await other.page.goto(`${origin}${base()}/postback`);
      await other.page.getByRole("heading", { level: 1, name: "Source: Postback" }).waitFor({ timeout: WAIT_MS });
      await other.page.getByText("needs the webhooks.update permission").waitFor({ timeout: WAIT_MS });
      expect(await other.page.getByLabel("Postback URL").isDisabled()).toBe(true);
      expect(await other.page.getByRole("button", { name: "Save postback" }).count()).toBe(0);
      await other.page.goto(`${origin}${base()}/postbacks/${postbackId}`);
      await other.page.getByRole("heading", { level: 3, name: /Attempt 2/ }).waitFor({ timeout: WAIT_MS });
      expect(await other.page.getByRole("button", { name: "Resend" }).count()).toBe(0);
      await screenshot(other.page, "traffic-sources-12-reader");
      await expectAccessible(other.page);
      expectClean(other.log);
    } finally {
      await other.context.close();
    }
  });
});

function templateOf(rx: Receiver): string {
  return `${rx.base}${NETWORK}?ext={{externalId}}&p={{payout}}&c={{conversionId}}`;
}
