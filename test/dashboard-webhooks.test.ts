import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { CHROMIUM, hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  openDashboardPage,
  type PageLog,
  screenshot,
  signIn,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  attemptsOf,
  eventOf,
  getHook,
  listEvents,
  recordConversion,
  startWebhookTestApp,
  WEBHOOKS_API,
} from "./helpers/webhooks.js";

// The outgoing webhooks pages end to end: the real service (its worker loop delivering) on
// loopback, a real HTTP receiver on 127.0.0.1 (allowed by WEBHOOK_ALLOWED_HOSTS, as the webhook
// tests do), and Chromium. What the pages show is checked against the API's own answers.
if (!hasChromium) {
  console.warn(`dashboard webhooks tests skipped: they need Chromium at ${CHROMIUM} (Debian package 'chromium').`);
}

const HOOK = "/hook";
const FLAKY = "/flaky";
const DOWN = "/down";
const RECEIVER_SAYS = "thanks from the receiver";

describe.skipIf(!hasChromium)("outgoing webhooks pages", () => {
  let t: TestApp;
  let who: Tenancy;
  let rx: Receiver;
  let browser: Browser;
  let origin: string;
  let page: Page;
  let log: PageLog;
  let closeContext: () => Promise<void>;
  let hookId = "";
  let firstEventId = "";

  const api = async (method: "GET" | "POST", url: string, payload?: unknown) => {
    const res = await t.call({
      method,
      url: `${WEBHOOKS_API}${url}`,
      headers: { authorization: who.bearer },
      ...(payload === undefined ? {} : { payload: payload as Record<string, unknown> }),
    });
    expect(res.statusCode, res.body).toBeLessThan(300);
    return res.json();
  };
  const go = async (path: string, heading: string | RegExp) => {
    await page.goto(`${origin}${path}`);
    await page.getByRole("heading", { level: 1, name: heading }).waitFor({ timeout: WAIT_MS });
  };
  const notice = (text: string | RegExp) => page.locator(".action-result").getByText(text);

  beforeAll(async () => {
    // A receiver on a busy machine may take more than the helpers' 500 ms to answer.
    t = await startWebhookTestApp({ env: { WEBHOOK_TIMEOUT_MS: "10000" } });
    who = await seedTenancy(t, { permissions: ["account.admin", "traffic-sources.delete"] });
    rx = await startReceiver();
    rx.on(HOOK, { status: 200, body: RECEIVER_SAYS, headers: { "x-receiver": "loopback" } });
    rx.on(FLAKY, [
      { status: 500, body: "down for now" },
      { status: 200, body: "back again" },
    ]);
    rx.on(DOWN, { status: 503, body: "unavailable" });
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    // The worker loop runs, as on a worker node: deliveries happen on their own.
    await t.ctx.delivery.start();
    browser = await launchChromium();
    const opened = await openDashboardPage(browser, origin);
    page = opened.page;
    log = opened.log;
    closeContext = () => opened.context.close();
    await page.goto(`${origin}/sign-in`);
    await signIn(page, who);
  }, 120_000);

  afterAll(async () => {
    await closeContext?.();
    await browser?.close();
    await t?.ctx.delivery.stop();
    await t?.close();
    await rx?.close();
  });

  it("creates a webhook through the page, checking its URL as it is typed", { timeout: 120_000 }, async () => {
    await go("/webhooks", "Outgoing webhooks");
    await page.getByText("No webhooks yet.").waitFor({ timeout: WAIT_MS });
    await screenshot(page, "webhooks-01-empty");
    await expectAccessible(page);

    await page.getByRole("link", { name: "New webhook" }).click();
    await page.getByRole("heading", { level: 1, name: "New webhook" }).waitFor({ timeout: WAIT_MS });
    await page.getByLabel("Name", { exact: true }).fill("Receiver");
    const url = page.getByLabel("URL template");

    // A private address: the API's refusal (naming the host and the variable) next to the field.
    const privateUrl = "http://10.1.2.3/pb?c={{conversionId}}";
    await url.fill(privateUrl);
    const refusal = (await api("POST", "/settings/validate", { url: privateUrl })).data;
    expect(refusal.valid).toBe(false);
    expect(refusal.message).toContain("10.1.2.3");
    const urlField = page.locator(".field").filter({ has: url });
    await urlField.getByRole("alert").getByText(refusal.message).waitFor({ timeout: WAIT_MS });
    expect(await url.getAttribute("aria-invalid")).toBe("true");
    await screenshot(page, "webhooks-02-url-refused");
    await expectAccessible(page);

    // A raw placeholder deciding the host: refused, naming the placeholder.
    const rawHost = "https://{{{parameterA}}}/pb";
    await url.fill(rawHost);
    const rawRefusal = (await api("POST", "/settings/validate", { url: rawHost })).data;
    expect(rawRefusal.placeholder).toBeTruthy();
    await urlField.getByText(rawRefusal.message).waitFor({ timeout: WAIT_MS });

    // The placeholder help: the names come from the API, inserted in the chosen syntax.
    const names = (await api("GET", "/placeholders")).data as { name: string }[];
    await page.getByText("Placeholders", { exact: true }).click();
    const buttons = page.getByRole("list", { name: "Placeholder names" }).getByRole("button");
    await expect.poll(() => buttons.count(), { timeout: WAIT_MS }).toBe(names.length);
    await url.fill(`${rx.base}${HOOK}?c=`);
    await page.getByRole("radio", { name: /^\$\{name\}/ }).check();
    await page.getByRole("button", { name: "Insert conversionId" }).click();
    expect(await url.inputValue()).toBe(`${rx.base}${HOOK}?c=\${conversionId}`);
    await page.getByRole("radio", { name: /^\{\{name\}\}/ }).check();
    await url.press("End");
    await url.pressSequentially("&t=");
    await page.getByRole("button", { name: "Insert conversionType" }).click();
    const template = `${rx.base}${HOOK}?c=\${conversionId}&t={{conversionType}}`;
    expect(await url.inputValue()).toBe(template);
    // Valid: the API's sample URL shows as the hint.
    const verdict = (await api("POST", "/settings/validate", { url: template })).data;
    expect(verdict.valid).toBe(true);
    await page.getByTestId("url-check").getByText(verdict.sampleUrl).waitFor({ timeout: WAIT_MS });
    expect(await url.getAttribute("aria-invalid")).toBeNull();

    await page.getByLabel("Method").selectOption("POST");
    await page.getByLabel("Event names").fill("Signup=lead");
    await screenshot(page, "webhooks-03-new-form");
    await expectAccessible(page);
    await page.getByRole("button", { name: "Create webhook" }).click();
    await notice("Receiver was created.").waitFor({ timeout: WAIT_MS });
    hookId = new URL(page.url()).pathname.split("/").at(-1) ?? "";
    const saved = await getHook(t, who.bearer, hookId);
    expect(saved).toMatchObject({ name: "Receiver", url: template, method: "POST", status: "Enabled" });
    expect(saved.eventNames).toEqual({ Signup: "lead" });
    await screenshot(page, "webhooks-04-created");
    await expectAccessible(page);

    // Saving a refused URL: the refusal of the save stands next to the field too.
    // The live check of the typed URL goes out after a pause, perhaps after the save: it is
    // awaited, or the next test's navigation would abort it and count it as a failed request.
    const refusedUrl = "http://127.0.0.2/pb";
    const checked = page.waitForResponse(
      (r) => r.url().endsWith("/settings/validate") && r.request().postDataJSON()?.url === refusedUrl,
    );
    await page.getByLabel("URL template").fill(refusedUrl);
    await page.getByRole("button", { name: "Save changes" }).click();
    await page
      .locator(".field")
      .filter({ has: page.getByLabel("URL template") })
      .getByText("127.0.0.2")
      .first()
      .waitFor();
    expect((await getHook(t, who.bearer, hookId)).url).toBe(template);
    await checked;
    // The one refused save answered 400, which Chromium also logs.
    expectClean({
      ...log,
      ownFailures: log.ownFailures.filter((f) => !f.endsWith("HTTP 400")),
      consoleErrors: log.consoleErrors.filter((e) => !e.includes("status of 400")),
    });
    log.ownFailures.length = 0;
    log.consoleErrors.length = 0;
  });

  it("shows a conversion's delivery in the log and its attempt on the event page", { timeout: 120_000 }, async () => {
    const conversion = await recordConversion(t, who.apiKey, { type: "Signup" });
    const got = await rx.waitFor(HOOK, WAIT_MS);
    expect(got.query.get("c")).toBe(conversion.id);
    await expect
      .poll(async () => (await eventOf(t, who.apiKey, conversion.id)).status, { timeout: WAIT_MS })
      .toBe("Delivered");
    const event = await eventOf(t, who.apiKey, conversion.id);
    firstEventId = event.id;

    await go("/webhooks/deliveries", "Delivery log");
    const row = page.getByRole("row").filter({ hasText: event.id });
    await row.getByText("Delivered").waitFor({ timeout: WAIT_MS });
    expect(await row.textContent()).toContain("Receiver");
    expect(await row.textContent()).toContain(conversion.id);
    await screenshot(page, "webhooks-05-deliveries");
    await expectAccessible(page);

    await row.getByRole("link", { name: event.id }).click();
    await page.getByRole("heading", { level: 1, name: `Delivery ${event.id}` }).waitFor({ timeout: WAIT_MS });
    const [attempt] = await attemptsOf(t, who.apiKey, event.id);
    expect(attempt?.response?.body).toBe(RECEIVER_SAYS);
    const shown = page.locator(".attempt").first();
    await shown.getByText("Attempt 1: HTTP 200").waitFor({ timeout: WAIT_MS });
    // The request as the receiver got it, and the receiver's answer.
    // JSON is shown indented: the same value the receiver got.
    expect(JSON.parse((await shown.locator("pre.request-body").textContent()) ?? "")).toEqual(JSON.parse(got.body));
    expect(JSON.parse(got.body).conversionId).toBe(conversion.id);
    expect(JSON.parse(got.body).eventName).toBe("lead");
    expect(await shown.locator("pre.response-body").textContent()).toBe(RECEIVER_SAYS);
    expect(await shown.getByRole("row", { name: /x-receiver/ }).textContent()).toContain("loopback");
    expect(await shown.textContent()).toContain(attempt?.urlTemplate ?? "no attempt");
    await screenshot(page, "webhooks-06-event");
    await expectAccessible(page);
    expectClean(log);
  });

  it("filters the log and pages through it, with both in the address", { timeout: 180_000 }, async () => {
    // 50 more conversions: 51 events of Receiver, two pages of 50.
    for (let i = 0; i < 50; i += 1) await recordConversion(t, who.apiKey, { type: "Signup" });
    const delivered = async () =>
      (await api("GET", `/events?status=Delivered&webhookId=${hookId}&limit=1`)).pagination?.total;
    await expect.poll(delivered, { timeout: 60_000 }).toBe(51);

    await go(`/webhooks/deliveries`, "Delivery log");
    await page.getByLabel("Status", { exact: true }).selectOption("Delivered");
    await page.getByLabel("Webhook", { exact: true }).selectOption({ label: "Receiver" });
    await page.getByRole("button", { name: "Apply" }).click();
    await page.waitForURL(
      (u) => u.searchParams.get("status") === "Delivered" && u.searchParams.get("webhookId") === hookId,
    );
    await page.getByText("1–50 of 51").waitFor({ timeout: WAIT_MS });
    await page.getByRole("navigation", { name: "Deliveries pages" }).getByRole("button", { name: "Next" }).click();
    await page.waitForURL((u) => u.searchParams.get("offset") === "50");
    await page.getByText("51–51 of 51").waitFor({ timeout: WAIT_MS });
    // The oldest is last: the first conversion's event.
    await page.getByRole("link", { name: firstEventId }).waitFor({ timeout: WAIT_MS });
    await screenshot(page, "webhooks-07-deliveries-page-2");
    await expectAccessible(page);

    // A shared address shows the same view; a filter with nothing to show says so.
    await page.reload();
    await page.getByText("51–51 of 51").waitFor({ timeout: WAIT_MS });
    await go(`/webhooks/deliveries?status=Failed&webhookId=${hookId}`, "Delivery log");
    await page.getByText("No delivery matches these filters.").waitFor({ timeout: WAIT_MS });
    expect(await page.getByLabel("Status", { exact: true }).inputValue()).toBe("Failed");
    const today = new Date().toISOString().slice(0, 10);
    await go(`/webhooks/deliveries?dateFrom=${today}&dateTo=${today}&conversionId=cnv_none`, "Delivery log");
    await page.getByText("No delivery matches these filters.").waitFor({ timeout: WAIT_MS });
    expect(await page.getByLabel("From", { exact: true }).inputValue()).toBe(today);
    expectClean(log);
  });

  it("disables, enables and simulates a webhook from the list", { timeout: 120_000 }, async () => {
    await go("/webhooks", "Outgoing webhooks");
    const row = page.getByRole("row").filter({ hasText: "Receiver" });
    await row.getByRole("button", { name: "Disable Receiver" }).click();
    await notice("Receiver is now Disabled.").waitFor({ timeout: WAIT_MS });
    await row.getByText("Disabled", { exact: true }).waitFor({ timeout: WAIT_MS });
    expect((await getHook(t, who.bearer, hookId)).status).toBe("Disabled");
    // Disabled: a conversion creates no delivery for it.
    const skipped = await recordConversion(t, who.apiKey, { type: "Signup" });
    expect(await listEvents(t, who.apiKey, `?conversionId=${skipped.id}`)).toEqual([]);
    expect(await row.getByRole("button", { name: "Simulate Receiver" }).count()).toBe(0);
    await screenshot(page, "webhooks-08-disabled");
    await expectAccessible(page);

    await row.getByRole("button", { name: "Enable Receiver" }).click();
    await notice("Receiver is now Enabled.").waitFor({ timeout: WAIT_MS });
    expect((await getHook(t, who.bearer, hookId)).status).toBe("Enabled");

    const before = rx.at(HOOK).length;
    await row.getByRole("button", { name: "Simulate Receiver" }).click();
    await notice(/A sample conversion is on its way/).waitFor({ timeout: WAIT_MS });
    await page.locator(".action-result").getByRole("link", { name: "its delivery" }).click();
    await page.getByRole("heading", { level: 1, name: /^Delivery / }).waitFor({ timeout: WAIT_MS });
    await page.getByText("Yes: a sample, not a conversion to pay for").waitFor({ timeout: WAIT_MS });
    await page.locator(".attempt").getByText("Attempt 1: HTTP 200").waitFor({ timeout: WAIT_MS });
    expect(rx.at(HOOK).length).toBe(before + 1);
    const sample = JSON.parse(rx.at(HOOK).at(-1)?.body ?? "{}");
    expect(sample.conversionId).toMatch(/^sim_/);
    expect(await page.locator("pre.request-body").textContent()).toContain(sample.conversionId);
    await screenshot(page, "webhooks-09-simulated");
    await expectAccessible(page);
    expectClean(log);
  });

  it("resends a failed delivery from its page", { timeout: 120_000 }, async () => {
    const flaky = (
      await api("POST", "/settings", { name: "Flaky", url: `${rx.base}${FLAKY}?c={{conversionId}}`, method: "GET" })
    ).data;
    const conversion = await recordConversion(t, who.apiKey, { type: "Signup" });
    await expect
      .poll(async () => (await eventOf(t, who.apiKey, conversion.id, flaky.id)).status, { timeout: WAIT_MS })
      .toBe("Retrying");
    const event = await eventOf(t, who.apiKey, conversion.id, flaky.id);

    await go(`/webhooks/deliveries/${event.id}`, `Delivery ${event.id}`);
    await page.locator(".attempt").getByText("Attempt 1: HTTP 500").waitFor({ timeout: WAIT_MS });
    expect(await page.locator("pre.response-body").textContent()).toBe("down for now");
    await screenshot(page, "webhooks-10-event-failed");
    await expectAccessible(page);

    await page.getByRole("button", { name: "Resend" }).click();
    await notice("Queued for a new attempt.").waitFor({ timeout: WAIT_MS });
    const second = page.locator(".attempt").nth(1);
    await second.getByText("Attempt 2: HTTP 200").waitFor({ timeout: WAIT_MS });
    expect(await second.locator("pre.response-body").textContent()).toBe("back again");
    await page.locator(".facts").getByText("Delivered").waitFor({ timeout: WAIT_MS });
    expect((await attemptsOf(t, who.apiKey, event.id)).map((a) => a.response?.status)).toEqual([500, 200]);
    expect(rx.at(FLAKY)).toHaveLength(2);
    await screenshot(page, "webhooks-11-event-resent");
    expectClean(log);
  });

  it("cancels and deletes a range of events after a confirmation, with the API's count", {
    timeout: 120_000,
  }, async () => {
    const down = (await api("POST", "/settings", { name: "Down", url: `${rx.base}${DOWN}`, method: "GET" })).data;
    for (let i = 0; i < 3; i += 1) await recordConversion(t, who.apiKey, { type: "Signup" });
    const downEvents = () => listEvents(t, who.apiKey, `?webhookId=${down.id}`);
    // Failed once each, waiting an hour for their retry: what Cancel stops.
    await expect
      .poll(async () => (await downEvents()).filter((e) => e.status === "Retrying").length, { timeout: WAIT_MS })
      .toBe(3);

    await go("/webhooks/deliveries", "Delivery log");
    await page.getByText("Cancel or delete a range of events").click();
    const panel = page.getByRole("region", { name: "Cancel or delete a range" });
    await panel.getByLabel("Of webhook").selectOption({ label: "Down" });
    await panel.getByRole("button", { name: "Cancel waiting events" }).click();
    const dialog = page.getByRole("dialog");
    await dialog.getByText("Cancel the waiting events of Down created on").waitFor({ timeout: WAIT_MS });
    await screenshot(page, "webhooks-12-confirm-cancel");
    await expectAccessible(page);
    // Thinking better of it: nothing happens.
    await dialog.getByRole("button", { name: "Cancel", exact: true }).click();
    expect((await downEvents()).every((e) => e.status === "Retrying")).toBe(true);

    await panel.getByRole("button", { name: "Cancel waiting events" }).click();
    await dialog.getByRole("button", { name: "Cancel waiting events" }).click();
    await panel.getByText("3 waiting events cancelled.").waitFor({ timeout: WAIT_MS });
    expect((await downEvents()).map((e) => e.status)).toEqual(["Cancelled", "Cancelled", "Cancelled"]);
    // Receiver's and Flaky's events of the same conversions are untouched.
    expect((await listEvents(t, who.apiKey, "?status=Cancelled")).length).toBe(3);

    await panel.getByRole("button", { name: "Delete events" }).click();
    await dialog.getByText(/Delete the events of Down created on .* cannot be undone/).waitFor({ timeout: WAIT_MS });
    await dialog.getByRole("button", { name: "Delete events" }).click();
    await panel.getByText("3 events deleted.").waitFor({ timeout: WAIT_MS });
    expect(await downEvents()).toEqual([]);
    await screenshot(page, "webhooks-13-range-deleted");
    await expectAccessible(page);
    expectClean(log);
  });

  it("offers no action without the permissions, and says why a page is refused", { timeout: 120_000 }, async () => {
    // account.admin without traffic-sources.delete: everything but the range actions.
    const admin = await seedTenancy(t, { permissions: ["account.admin"] });
    const opened = await openDashboardPage(browser, origin, { expectedStatuses: [404] });
    try {
      await opened.page.goto(`${origin}/sign-in`);
      await signIn(opened.page, admin);
      await opened.page.goto(`${origin}/webhooks/deliveries`);
      await opened.page.getByRole("heading", { level: 1, name: "Delivery log" }).waitFor({ timeout: WAIT_MS });
      await screenshot(opened.page, "webhooks-15-deliveries-without-range-permission");
      await opened.page.getByText("also needs the traffic-sources.delete permission").waitFor({ timeout: WAIT_MS });
      expect(await opened.page.getByRole("button", { name: "Delete events" }).count()).toBe(0);
      expectClean(opened.log);
      // An event that is not there: the API's answer, on the page.
      const missing = await t.call({
        method: "GET",
        url: `${WEBHOOKS_API}/events/evt_missing`,
        headers: { authorization: admin.bearer },
      });
      expect(missing.statusCode).toBe(404);
      await opened.page.goto(`${origin}/webhooks/deliveries/evt_missing`);
      await opened.page.getByRole("alert").getByText(missing.json().message).waitFor({ timeout: WAIT_MS });
      await screenshot(opened.page, "webhooks-16-event-not-found");
      await expectAccessible(opened.page);
    } finally {
      await opened.context.close();
    }

    // No account.admin: the API refuses the list, and the page says so; nothing is offered.
    const reader = await seedTenancy(t, { permissions: ["reports.read", "webhooks.read"] });
    const refused = await openDashboardPage(browser, origin, { expectedStatuses: [403] });
    try {
      await refused.page.goto(`${origin}/sign-in`);
      await signIn(refused.page, reader);
      await refused.page.goto(`${origin}/webhooks`);
      await refused.page.getByText(/You do not have permission for this/).waitFor({ timeout: WAIT_MS });
      expect(await refused.page.getByRole("link", { name: "New webhook" }).count()).toBe(0);
      await screenshot(refused.page, "webhooks-14-refused");
      await expectAccessible(refused.page);
      expect(refused.log.pageErrors).toEqual([]);
      expect(refused.log.ownFailures).toEqual([]);
    } finally {
      await refused.context.close();
    }
  });
});
