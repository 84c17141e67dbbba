/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { readFile } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  gotoWhenIdle,
  localDay,
  openDashboardPage,
  pickFromPicker,
  screenshot,
  signInSettled,
  trackRequests,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { type Conversion, createHook, recordConversion, startWebhookTestApp } from "./helpers/webhooks.js";

// Conversions (/conversions) end to end: the list is the API's list for the same filters and
// page; a conversion's page shows the postbacks it really caused, sent to a loopback receiver.

const PAGE_SIZE = 25;
const HOOK_NAME = "CRM postback";
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe.skipIf(!hasChromium)("dashboard: conversions", () => {
  let t: TestApp;
  let who: Tenancy;
  let rx: Receiver;
  let browser: Browser;
  let origin: string;
  let deposit: Conversion;
  let unattributed: Conversion;
  let commission: Conversion;

  beforeAll(async () => {
    // A loaded machine can take more than the helpers' 500 ms to answer on loopback.
    t = await startWebhookTestApp({ env: { WEBHOOK_TIMEOUT_MS: "15000" } });
    rx = await startReceiver();
    who = await seedTenancy(t);
    // Seeded traffic first (its conversions fire nothing: no webhook yet), then a webhook to the
    // receiver, then conversions recorded through the API, which it posts back.
    await generateTraffic(t.ctx.db, who.tenantId, { days: 20, clicks: 400, now: t.clock.now() });
    const seeded = await t.call({
      method: "GET",
      url: "/api/v1/conversions?type=Signup&limit=1",
      headers: { authorization: who.bearer },
    });
    const clickId = seeded.json().data[0]?.clickId as string;
    expect(clickId).toBeTruthy();
    await createHook(t, who, { name: HOOK_NAME, url: `${rx.base}/postback?c=\${conversionId}` });
    deposit = await recordConversion(t, who, {
      type: "Deposit",
      clickId,
      value: "25.5",
      currency: "EUR",
      externalId: "dashboard-deposit-1",
    });
    unattributed = await recordConversion(t, who, { type: "Signup", clickId: "clk_not_in_this_tenant" });
    commission = await recordConversion(t, who, { type: "CpaCommission", clickId, value: 40 });
    // The worker's round: both postbacks go out to the receiver.
    expect(await t.ctx.delivery.tick()).toBe(2);
    expect(rx.at("/postback").map((r) => r.query.get("c"))).toEqual(
      expect.arrayContaining([deposit.id, unattributed.id]),
    );
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
  }, 180_000);

  afterAll(async () => {
    await browser?.close();
    await rx?.close();
    await t?.close();
  });

  async function apiList(params: Record<string, string | number>) {
    const query = new URLSearchParams(Object.entries({ limit: PAGE_SIZE, ...params }).map(([k, v]) => [k, String(v)]));
    const res = await t.call({
      method: "GET",
      url: `/api/v1/conversions?${query}`,
      headers: { authorization: who.bearer },
    });
    expect(res.statusCode, res.body).toBe(200);
    return { ids: (res.json().data as { id: string }[]).map((c) => c.id), total: res.json().pagination?.total ?? 0 };
  }

  /** The conversion ids the list shows, read from their links. */
  const shownIds = (page: Page) =>
    page.$$eval("table.data-table tbody tr td:first-child a", (links) =>
      links.map((a) => decodeURIComponent(new URL((a as HTMLAnchorElement).href).pathname.split("/").pop() ?? "")),
    );

  /** Waits until the list shows exactly these ids, in this order. */
  async function expectShown(page: Page, ids: string[]) {
    await expect.poll(() => shownIds(page), { timeout: WAIT_MS }).toEqual(ids);
  }

  it("lists the API's conversions, filtered and paged through the address", { timeout: 180_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      await page.getByRole("link", { name: "Conversions", exact: true }).click();
      await page.getByRole("heading", { name: "Conversions", level: 1 }).waitFor({ timeout: WAIT_MS });

      const all = await apiList({});
      expect(all.total).toBeGreaterThan(PAGE_SIZE);
      await expectShown(page, all.ids);
      await expect
        .poll(() => page.getByRole("navigation", { name: "Conversions pages" }).textContent())
        .toContain(`1–${PAGE_SIZE} of ${all.total}`);
      await screenshot(page, "conversions-01-list");
      await expectAccessible(page);

      // Paging.
      await page.getByRole("button", { name: "Next" }).click();
      await page.waitForURL((url) => url.searchParams.get("offset") === String(PAGE_SIZE));
      await expectShown(page, (await apiList({ offset: PAGE_SIZE })).ids);

      // By type: the address carries it and the page starts again at the first.
      await page.getByLabel("Type").selectOption("Deposit");
      await page.getByRole("button", { name: "Apply" }).click();
      await page.waitForURL((url) => url.searchParams.get("type") === "Deposit" && !url.searchParams.has("offset"));
      const deposits = await apiList({ type: "Deposit" });
      expect(deposits.ids).toContain(deposit.id);
      await expectShown(page, deposits.ids);

      // By click id and day: the API's answer for the same filters.
      await page.getByLabel("Type").selectOption("");
      await page.getByLabel("Click id").fill(String(deposit.clickId));
      await page.getByLabel("From", { exact: true }).fill(day(Date.now()));
      await page.getByLabel("To", { exact: true }).fill(day(Date.now()));
      await page.getByRole("button", { name: "Apply" }).click();
      await page.waitForURL((url) => url.searchParams.get("clickId") === deposit.clickId);
      const byClick = await apiList({
        clickId: String(deposit.clickId),
        dateFrom: day(Date.now()),
        dateTo: day(Date.now()),
      });
      expect(byClick.ids).toEqual(expect.arrayContaining([deposit.id, commission.id]));
      await expectShown(page, byClick.ids);
      await screenshot(page, "conversions-02-filtered");
      await expectAccessible(page);

      // Nothing matches: it says so.
      await page.getByLabel("Click id").fill("clk_nobody_clicked_this");
      await page.getByRole("button", { name: "Apply" }).click();
      await page.getByText("No conversion matches these filters.").waitFor({ timeout: WAIT_MS });

      // Clear: back to every conversion.
      await page.getByRole("button", { name: "Clear" }).click();
      await page.waitForURL((url) => url.search === "");
      await expectShown(page, all.ids);

      // A shared address opens the same filters.
      await gotoWhenIdle(page, `${origin}/conversions?type=Signup&offset=${PAGE_SIZE}`);
      await expectShown(page, (await apiList({ type: "Signup", offset: PAGE_SIZE })).ids);
      expect(await page.getByLabel("Type").inputValue()).toBe("Signup");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("names the catalog items, searches by external id, filters by source, exports CSV", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      // Names, not ids: the first row's account, link and source as the API names them.
      await gotoWhenIdle(page, `${origin}/conversions?externalId=dashboard-deposit-1`);
      await expectShown(page, [deposit.id]);
      const listed = await t.call({
        method: "GET",
        url: "/api/v1/conversions?externalId=dashboard-deposit-1",
        headers: { authorization: who.bearer },
      });
      const names = listed.json().data[0].names as { account: string; link: string; trafficSource: string };
      const row = page.locator("table.data-table tbody tr").first();
      for (const name of [names.account, names.link, names.trafficSource]) {
        await expect.poll(() => row.textContent(), { timeout: WAIT_MS }).toContain(name);
      }
      expect(await row.textContent()).not.toMatch(/#\d/);
      expect(await page.getByLabel("External id").inputValue()).toBe("dashboard-deposit-1");

      // By traffic source: the API's list for it.
      await page.getByRole("button", { name: "Clear" }).click();
      await page.waitForURL((url) => url.search === "");
      await pickFromPicker(page, "Traffic source", names.trafficSource.slice(0, 4), names.trafficSource);
      await page.getByRole("button", { name: "Apply" }).click();
      await page.waitForURL((url) => url.searchParams.has("source"));
      const sourceId = new URL(page.url()).searchParams.get("source") ?? "";
      const bySource = await apiList({ trafficSourceId: sourceId });
      expect(bySource.total).toBeGreaterThan(0);
      await expectShown(page, bySource.ids);
      await screenshot(page, "conversions-10-by-source");
      await expectAccessible(page);

      // The CSV holds every conversion the filters match, with names.
      const downloaded = page.waitForEvent("download", { timeout: WAIT_MS });
      await page.getByRole("button", { name: "Export CSV" }).click();
      const file = await downloaded;
      const text = await readFile(String(await file.path()), "utf8");
      const lines = text.trim().split("\r\n");
      expect(lines[0]).toContain("id,occurredAt,type,status,value,currency,clickId,externalId");
      expect(lines).toHaveLength(bySource.total + 1);
      expect(lines.slice(1).every((line) => line.includes(names.trafficSource))).toBe(true);
      await expect
        .poll(() => page.getByRole("status").filter({ hasText: "Exported" }).textContent(), { timeout: WAIT_MS })
        .toBe(`Exported ${bySource.total.toLocaleString("en-US")} conversions.`);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "conversions-11-by-source-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1440, height: 900 });

      // The overview: signups and first deposits are cards of their own, as the report counts them.
      await gotoWhenIdle(page, `${origin}/`);
      const report = await t.call({
        method: "GET",
        url: "/api/v1/reports/events/performance?stats=signups,firstTimeDeposit,commission",
        headers: { authorization: who.bearer },
      });
      const totals = report.json().data[0] as { signups: number; firstTimeDeposit: number };
      for (const [stat, value] of Object.entries(totals).filter(([k]) => k !== "commission")) {
        await expect
          .poll(() => page.locator(`.card[data-stat="${stat}"]`).getAttribute("data-value"), { timeout: WAIT_MS })
          .toBe(String(value));
      }
      expect(await page.locator('.card[data-stat="commission"] .card-hint').textContent()).toMatch(
        /commission, [A-Z]{3}/,
      );
      await screenshot(page, "overview-cards");
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "overview-cards-390px");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("filters by days of the account's time zone, names it, and asks the API in it", { timeout: 90_000 }, async () => {
    // UTC+14: most of the time its date is not UTC's, so the days filtered by are plainly its own.
    const zone = "Pacific/Kiritimati";
    const patch = (timeZone: string) =>
      t.call({
        method: "PATCH",
        url: "/api/v1/settings",
        headers: { authorization: who.bearer },
        payload: { timeZone },
      });
    expect((await patch(zone)).statusCode).toBe(200);
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      const today = localDay(zone);
      const asked = page.waitForRequest(
        (r) => {
          const u = new URL(r.url());
          return u.pathname === "/api/v1/conversions" && u.searchParams.get("dateFrom") === today;
        },
        { timeout: WAIT_MS },
      );
      await gotoWhenIdle(page, `${origin}/conversions?from=${today}&to=${today}`);
      expect(new URL((await asked).url()).searchParams.get("timeZone")).toBe(zone);
      await expect
        .poll(() => page.getByTestId("dates-zone").textContent(), { timeout: WAIT_MS })
        .toBe(
          `The From and To dates are whole days in ${zone}, the account's time zone (set under Settings). Times in the list are UTC.`,
        );
      // The API's list for the same local day.
      const local = await apiList({ dateFrom: today, dateTo: today, timeZone: zone });
      expect(local.ids).toEqual(expect.arrayContaining([deposit.id, commission.id]));
      await expectShown(page, local.ids);
      await screenshot(page, "conversions-09-local-days");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
      // Back to UTC: the other tests of this file read days in the default.
      expect((await patch("UTC")).statusCode).toBe(200);
    }
  });

  it("shows each conversion's own amount in its own currency, or a dash without one", { timeout: 90_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    /** A conversion's value as the list shows it: the figure in its currency's decimals (up to 4), then the code. */
    const asShown = (value: number | null, currency: string | null) => {
      if (value === null) return "—no value";
      const digits = new Intl.NumberFormat("en-US", {
        style: "currency",
        currency: currency ?? "USD",
      }).resolvedOptions().minimumFractionDigits as number;
      const figure = new Intl.NumberFormat("en-US", {
        minimumFractionDigits: digits,
        maximumFractionDigits: Math.max(4, digits),
      }).format(value);
      return `${figure} ${currency}`;
    };
    const shownValues = () =>
      page.$$eval("table.data-table tbody tr", (trs) =>
        // Occurred, type, status, then the value.
        trs.map((tr) => tr.querySelectorAll("td")[3]?.textContent ?? ""),
      );
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      // The deposit (25.50 EUR) and the commission sent without a currency (the tenant's USD), on one click.
      await gotoWhenIdle(page, `${origin}/conversions?clickId=${encodeURIComponent(String(deposit.clickId))}`);
      const res = await t.call({
        method: "GET",
        url: `/api/v1/conversions?clickId=${encodeURIComponent(String(deposit.clickId))}&limit=${PAGE_SIZE}`,
        headers: { authorization: who.bearer },
      });
      const rows = res.json().data as { id: string; value: number | null; currency: string | null }[];
      await expectShown(
        page,
        rows.map((r) => r.id),
      );
      const expected = rows.map((r) => asShown(r.value, r.currency));
      expect(expected).toEqual(expect.arrayContaining(["25.50 EUR", "40.00 USD"]));
      expect(await shownValues()).toEqual(expected);
      await screenshot(page, "conversions-07-values");
      await expectAccessible(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "conversions-08-values-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1024, height: 800 });

      // A signup sent without a value: a dash, read out as "no value".
      await gotoWhenIdle(page, `${origin}/conversions?clickId=clk_not_in_this_tenant`);
      await expectShown(page, [unattributed.id]);
      expect(await shownValues()).toEqual(["—no value"]);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("shows a conversion with the postbacks it caused, each linked to its delivery", { timeout: 120_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      await gotoWhenIdle(page, `${origin}/conversions?type=Deposit`);
      await page.locator(`a[href="/conversions/${deposit.id}"]`).click();
      await page.getByRole("heading", { name: /Deposit/, level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(new URL(page.url()).pathname).toBe(`/conversions/${deposit.id}`);
      const facts = page.locator(".facts");
      await expect.poll(() => facts.textContent()).toContain("25.50 EUR");
      expect(await facts.textContent()).toContain("dashboard-deposit-1");
      expect(await facts.textContent()).toContain(String(deposit.clickId));
      // The catalog names the conversion's ids, as its own routes answer them.
      const full = await t.call({
        method: "GET",
        url: `/api/v1/conversions/${deposit.id}`,
        headers: { authorization: who.bearer },
      });
      const account = await t.call({
        method: "GET",
        url: `/api/v1/accounts/${full.json().data.accountId}`,
        headers: { authorization: who.bearer },
      });
      await expect.poll(() => facts.textContent()).toContain(account.json().data.name);

      // Its postback, as the events API lists it, linked to the delivery's page.
      const res = await t.call({
        method: "GET",
        url: `/api/v1/conversions/outgoing/webhooks/events?conversionId=${deposit.id}`,
        headers: { authorization: who.bearer },
      });
      const events = res.json().data as { id: string; status: string }[];
      expect(events).toHaveLength(1);
      const event = events[0] as { id: string; status: string };
      expect(event.status).toBe("Delivered");
      const postbacks = page.getByRole("table", { name: "Postbacks this conversion caused" });
      const link = postbacks.getByRole("link", { name: event.id });
      await link.waitFor({ timeout: WAIT_MS });
      expect(await link.getAttribute("href")).toBe(`/webhooks/deliveries/${event.id}`);
      expect(await postbacks.textContent()).toContain("Delivered");
      expect(await postbacks.getByRole("link", { name: HOOK_NAME }).count()).toBe(1);
      await screenshot(page, "conversions-03-detail");
      await expectAccessible(page);

      // A commission fires no postback: the page says so.
      await gotoWhenIdle(page, `${origin}/conversions/${commission.id}`);
      await page.getByText("This conversion caused no postbacks").waitFor({ timeout: WAIT_MS });
      await screenshot(page, "conversions-04-no-postbacks");
      await expectAccessible(page);

      // Back to the list by the breadcrumb.
      await page.locator(".breadcrumb").getByRole("link", { name: "Conversions" }).click();
      await page.getByRole("heading", { name: "Conversions", level: 1 }).waitFor({ timeout: WAIT_MS });
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("tells a person without account.admin that postbacks are not theirs to see", { timeout: 60_000 }, async () => {
    // reports.read too: the overview, where signing in lands, reads the reports.
    const reader = await seedTenancy(t, { permissions: ["conversions.read", "reports.read"] });
    const own = await recordConversion(t, { apiKey: reader.apiKey }, { type: "Signup", externalId: "reader-1" });
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, reader);
      await gotoWhenIdle(page, `${origin}/conversions/${own.id}`);
      await page.getByText("Only account administrators can see the postbacks").waitFor({ timeout: WAIT_MS });
      expect(await page.locator(".facts").textContent()).toContain("reader-1");
      await screenshot(page, "conversions-05-reader");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("says so when a conversion does not exist", { timeout: 60_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [404] });
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      await gotoWhenIdle(page, `${origin}/conversions/cnv_missing`);
      await expect.poll(() => page.getByRole("alert").textContent(), { timeout: WAIT_MS }).toContain("cnv_missing");
      await screenshot(page, "conversions-06-unknown");
      await expectAccessible(page);
      // Chrome logs the 404 it was answered; nothing else may fail.
      expect(log.consoleErrors.filter((e) => !e.includes("status of 404"))).toEqual([]);
      expect(log.pageErrors).toEqual([]);
      expect(log.ownFailures).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
