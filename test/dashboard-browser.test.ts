import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { raiseIssue } from "../src/features/issues/index.js";
import { DAY_MS } from "../src/platform/durations.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { CHROMIUM, hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  signIn,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// The dashboard end to end: the real service on loopback, its built assets (web/dist), Debian's
// Chromium. Every figure on the overview must be the API's own answer for the same parameters.
if (!hasChromium) {
  console.warn(`dashboard browser tests skipped: they need Chromium at ${CHROMIUM} (Debian package 'chromium').`);
}

const STATS = ["clicks", "signups", "firstTimeDeposit", "commission", "conversionRate"] as const;
const ISSUE_TITLE = "Webhook 'CRM' keeps failing";

/** The API's totals for a range, as a third-party client would ask for them. */
async function apiTotals(t: TestApp, who: Tenancy, from: string, to: string): Promise<Record<string, number>> {
  const query = new URLSearchParams({ stats: STATS.join(","), conversionDateFrom: from, conversionDateTo: to });
  const res = await t.call({
    method: "GET",
    url: `/api/v1/reports/events/performance?${query}`,
    headers: { authorization: who.bearer },
  });
  expect(res.statusCode).toBe(200);
  const row = (res.json().data as Record<string, number>[])[0] ?? {};
  return Object.fromEntries(STATS.map((s) => [s, row[s] ?? 0]));
}

/** The figures the overview shows, read once every card has its current and previous value. */
async function shownTotals(page: Page): Promise<{ current: Record<string, number>; previous: Record<string, number> }> {
  await page.waitForFunction(
    (n) =>
      Array.from(document.querySelectorAll<HTMLElement>(".card")).filter(
        (c) => c.dataset.value !== "" && c.dataset.previous !== "",
      ).length === n,
    STATS.length,
    { timeout: WAIT_MS },
  );
  return page.$$eval(".card", (cards) => {
    const current: Record<string, number> = {};
    const previous: Record<string, number> = {};
    for (const card of cards as HTMLElement[]) {
      current[String(card.dataset.stat)] = Number(card.dataset.value);
      previous[String(card.dataset.stat)] = Number(card.dataset.previous);
    }
    return { current, previous };
  });
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe.skipIf(!hasChromium)("dashboard in a browser", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    t = await startTestApp();
    who = await seedTenancy(t);
    // Demo-like traffic over the last 60 days: both the default range and its previous period have some.
    await generateTraffic(t.ctx.db, who.tenantId, { days: 60, clicks: 3000, now: t.clock.now() });
    await raiseIssue(
      t.ctx.db,
      {
        tenantId: who.tenantId,
        kind: "outgoing_webhook_failed",
        severity: "error",
        title: ISSUE_TITLE,
        subject: { type: "webhook", id: "wh_1", name: "CRM" },
        details: { failures: 12, lastError: "HTTP 503" },
      },
      t.clock.now(),
    );
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("signs in, shows the API's figures and the open issues, and signs out", { timeout: 120_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [401] });
    try {
      // Not signed in: the overview sends to the sign-in page.
      await page.goto(`${origin}/`);
      await page.getByRole("heading", { name: "Sign in" }).waitFor({ timeout: WAIT_MS });
      expect(new URL(page.url()).pathname).toBe("/sign-in");
      await screenshot(page, "01-sign-in");
      await expectAccessible(page);

      // A wrong password: the API's message, and still on the sign-in page.
      await page.getByLabel("Email").fill(who.email);
      await page.getByLabel("Password").fill("not the password");
      await page.getByRole("button", { name: "Sign in" }).click();
      await expect
        .poll(() => page.getByRole("alert").textContent(), { timeout: WAIT_MS })
        .toContain("Email or password is wrong");
      await screenshot(page, "02-sign-in-refused");

      await signIn(page, who);
      const started = Date.now();
      const shown = await shownTotals(page);
      const figuresMs = Date.now() - started;
      // The range the page asked for, read from its own inputs.
      const from = await page.getByLabel("From", { exact: true }).inputValue();
      const to = await page.getByLabel("To", { exact: true }).inputValue();
      expect(from).toBe(day(Date.now() - 29 * DAY_MS));
      const previousTo = day(Date.parse(`${from}T00:00:00Z`) - DAY_MS);
      const previousFrom = day(Date.parse(`${previousTo}T00:00:00Z`) - 29 * DAY_MS);
      expect(shown.current).toEqual(await apiTotals(t, who, from, to));
      expect(shown.previous).toEqual(await apiTotals(t, who, previousFrom, previousTo));
      expect(shown.current.clicks).toBeGreaterThan(0);
      expect(shown.previous.clicks).toBeGreaterThan(0);
      // As a person reads it: the API's clicks, formatted.
      await expect
        .poll(() => page.locator('.card[data-stat="clicks"] .card-value').textContent())
        .toBe(new Intl.NumberFormat("en-US").format(shown.current.clicks ?? 0));

      // The daily chart is drawn, and says what it shows.
      const chart = page.getByRole("img", { name: /Chart of daily clicks and conversions/ });
      await chart.locator("canvas").waitFor({ timeout: WAIT_MS });
      // The open issue, linked to its page.
      const issueLink = page.getByRole("link", { name: ISSUE_TITLE });
      await issueLink.waitFor({ timeout: WAIT_MS });
      await screenshot(page, "03-overview");
      await expectAccessible(page);
      console.info(`dashboard: overview figures on screen ${figuresMs} ms after sign-in`);

      // The token is in session storage, never in an address.
      const stored = await page.evaluate(() => sessionStorage.getItem("tp.session"));
      const token = (JSON.parse(String(stored)) as { token: string }).token;
      expect(token.split(".")).toHaveLength(3);
      expect(page.url()).not.toContain(token);

      // Another range: a preset changes the address (shareable) and the figures follow the API.
      await page.getByRole("link", { name: "Last 7 days" }).click();
      await page.waitForURL((url) => url.searchParams.get("from") === day(Date.now() - 6 * DAY_MS));
      await page.waitForFunction(() => document.querySelector<HTMLInputElement>("#range-from")?.value !== "", null);
      const week = await shownTotals(page);
      expect(week.current).toEqual(await apiTotals(t, who, day(Date.now() - 6 * DAY_MS), day(Date.now())));

      // Keyboard, on a freshly loaded page (the session survives a reload): the first Tab reaches
      // the skip link, which leads to the content; the next ones the top bar, then the sidebar.
      await page.reload();
      await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor({ timeout: WAIT_MS });
      const focused = () => page.evaluate(() => document.activeElement?.textContent ?? "");
      await page.keyboard.press("Tab");
      expect(await focused()).toBe("Skip to content");
      await page.keyboard.press("Tab");
      expect(await focused()).toBe("Sign out");
      await page.keyboard.press("Tab");
      expect(await focused()).toBe("Overview");
      await page.keyboard.press("Shift+Tab");
      await page.keyboard.press("Shift+Tab");
      await page.keyboard.press("Enter");
      expect(await page.evaluate(() => document.activeElement?.id)).toBe("main");

      await issueLink.click();
      await page.getByRole("heading", { name: ISSUE_TITLE }).waitFor({ timeout: WAIT_MS });
      expect(await page.locator(".facts").textContent()).toContain("HTTP 503");
      await screenshot(page, "04-issue");
      await expectAccessible(page);

      // A reload of a client route shows the same page (the service answers index.html).
      await page.reload();
      await page.getByRole("heading", { name: ISSUE_TITLE }).waitFor({ timeout: WAIT_MS });

      const meWith = () => t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: `Bearer ${token}` } });
      expect((await meWith()).statusCode).toBe(200);
      await page.getByRole("button", { name: "Sign out" }).click();
      await page.getByText("You have signed out.").waitFor({ timeout: WAIT_MS });
      expect(await page.evaluate(() => sessionStorage.getItem("tp.session"))).toBeNull();
      // Sign-out ended the session on the service too (DELETE /api/v1/auth), not only in the tab.
      expect((await meWith()).statusCode).toBe(401);
      await page.goto(`${origin}/`);
      await page.getByRole("heading", { name: "Sign in" }).waitFor({ timeout: WAIT_MS });
      await screenshot(page, "05-signed-out");
      // Only the refused sign-in answered 401.
      expectClean(log, true);
      expect(log.consoleErrors.length).toBeLessThanOrEqual(1);
    } finally {
      await context.close();
    }
  });

  it("returns to the sign-in page with a message when the session has expired", { timeout: 60_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [401] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await shownTotals(page);
      // The service's clock passes the token's 12 hours; the browser still holds it.
      t.clock.advance(13 * 3600 * 1000);
      await page.getByRole("link", { name: "Last 90 days" }).click();
      await page
        .getByText("Your session has expired or was revoked. Sign in again to continue.")
        .waitFor({ timeout: WAIT_MS });
      expect(new URL(page.url()).pathname).toBe("/sign-in");
      expect(await page.evaluate(() => sessionStorage.getItem("tp.session"))).toBeNull();
      await screenshot(page, "06-session-expired");
      await expectAccessible(page);
      // And signing in again works.
      await signIn(page, who);
      await shownTotals(page);
      expect(log.ownFailures.filter((f) => !f.includes("/api/v1/"))).toEqual([]);
      expect(log.pageErrors).toEqual([]);
      expect(log.consoleErrors.filter((e) => !e.includes("401"))).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it("offers a person only what their permissions allow", { timeout: 60_000 }, async () => {
    // reports.read without account.admin: the figures, but no issues panel (GET /issues would be a 403).
    const reader = await seedTenancy(t, { permissions: ["reports.read"] });
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, reader);
      const shown = await shownTotals(page);
      expect(shown.current.clicks).toBe(0);
      await page.getByText("No clicks or conversions in this period.").waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("heading", { name: "Open issues" }).count()).toBe(0);
      await screenshot(page, "07-overview-reader-empty");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("sends the first screen in a small compressed bundle", { timeout: 60_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page
        .getByRole("img", { name: /Chart of daily/ })
        .locator("canvas")
        .waitFor({ timeout: WAIT_MS });
      const bytes = log.scripts.reduce((sum, s) => sum + s.bytes, 0);
      console.info(
        `dashboard: first route JS+CSS ${(bytes / 1024).toFixed(1)} KiB on the wire (${log.scripts.length} files)`,
      );
      // The issue's goal: at most 300 KB compressed for the first route.
      expect(bytes).toBeLessThan(300 * 1000);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
