import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyViaApi, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { CHROMIUM, hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  signIn,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// The usage page end to end: calls made with two API keys (some over the rate limit), then every
// figure the page shows is compared with the usage endpoints' own answers.
if (!hasChromium) {
  console.warn(`dashboard usage tests skipped: they need Chromium at ${CHROMIUM} (Debian package 'chromium').`);
}

const USAGE = "/api/v1/traffic-controls/api-usage";
// Low enough that a key's 429s cost a few dozen injected calls; high enough that the person's
// own budget (the dashboard's calls) is never spent in a test.
const LIMIT = 60;
const OVER_LIMIT = 6;

interface Row {
  key: string;
  label: string;
  calls: number;
}

async function usage(t: TestApp, who: Tenancy, path: string) {
  const res = await t.call({ method: "GET", url: `${USAGE}${path}`, headers: { authorization: who.bearer } });
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

async function callWith(t: TestApp, apiKey: string, url: string) {
  return (await t.call({ method: "GET", url, headers: { authorization: apiKey } })).statusCode;
}

/** The cards' figures, once every one has its value. */
/** The API-call totals' cards (the webhook allowance has cards of its own below). */
const TOTALS = 'section[aria-labelledby="usage-figures-title"] .card';

async function shownCards(page: Page): Promise<Record<string, number>> {
  await page.waitForFunction(
    (selector) => {
      const cards = Array.from(document.querySelectorAll<HTMLElement>(selector));
      return cards.length === 4 && cards.every((c) => c.dataset.value !== "");
    },
    TOTALS,
    { timeout: WAIT_MS },
  );
  return page.$$eval(TOTALS, (cards) =>
    Object.fromEntries((cards as HTMLElement[]).map((c) => [String(c.dataset.stat), Number(c.dataset.value)])),
  );
}

const number = (text: string) => Number(text.replace(/,/g, ""));

/** A panel's table as [first cell, second cell as a number] pairs, in the order shown. */
async function shownRows(page: Page, panelTitle: string): Promise<[string, number][]> {
  const table = page
    .locator("section.panel", { has: page.getByRole("heading", { name: panelTitle }) })
    .locator("table");
  await table.waitFor({ timeout: WAIT_MS });
  const rows = await table
    .locator("tbody tr")
    .evaluateAll((trs) => trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => td.textContent ?? "")));
  return rows.map(([first, second]) => [String(first), number(String(second))]);
}

describe.skipIf(!hasChromium)("dashboard usage page", () => {
  let t: TestApp;
  let who: Tenancy;
  let second: { id: string; apiKey: string };
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: LIMIT } } });
    who = await seedTenancy(t);
    second = await createKeyViaApi(t, who, "Reporting key");
    // The first key: its whole budget over two endpoints, then some calls refused with 429.
    for (let i = 0; i < LIMIT - 10; i++) expect(await callWith(t, who.apiKey, "/api/v1/users")).toBe(200);
    for (let i = 0; i < 10; i++) expect(await callWith(t, who.apiKey, "/api/v1/api-tokens")).toBe(200);
    for (let i = 0; i < OVER_LIMIT; i++) expect(await callWith(t, who.apiKey, "/api/v1/users")).toBe(429);
    // The second key: a few calls, one of them a 404.
    for (let i = 0; i < 7; i++) expect(await callWith(t, second.apiKey, "/api/v1/users")).toBe(200);
    expect(await callWith(t, second.apiKey, "/api/v1/issues/iss_missing")).toBe(404);
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("shows the API's usage figures, the 429s apart, by hour and by day, by endpoint and by key", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in?next=${encodeURIComponent("/usage")}`);
      await page.getByLabel("Email").fill(who.email);
      await page.getByLabel("Password").fill(who.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByRole("heading", { name: "API usage", level: 1 }).waitFor({ timeout: WAIT_MS });

      const stats = await usage(t, who, "/stats");
      expect(stats.rateLimited).toBe(OVER_LIMIT);
      expect(await shownCards(page)).toEqual({
        totalCalls: stats.totalCalls,
        rateLimited: stats.rateLimited,
        serverErrors: stats.byStatusClass["5xx"],
        uniqueIps: stats.uniqueIps,
      });
      expect(stats.totalCalls).toBe(LIMIT + OVER_LIMIT + 8);
      // The 429s stand apart: their own card with their share, and their own bar.
      const limitedCard = page.locator('.card[data-stat="rateLimited"]');
      expect(await limitedCard.locator(".card-value").textContent()).toBe(String(OVER_LIMIT));
      expect(await limitedCard.locator(".card-compare").textContent()).toContain("of calls");
      const byStatus = page.getByRole("img", { name: /Chart of calls by status/ });
      await byStatus.locator("canvas").waitFor({ timeout: WAIT_MS });
      const statusLabel = String(await byStatus.getAttribute("aria-label"));
      expect(statusLabel).toContain(`429 ${stats.rateLimited}`);
      expect(statusLabel).toContain(`4xx (not 429) ${stats.byStatusClass["4xx"] - stats.rateLimited}`);
      expect(statusLabel).toContain(`2xx ${stats.byStatusClass["2xx"]}`);

      // By hour: the chart, and its figures as a table equal to the API's non-empty buckets.
      const hourly = await usage(t, who, "/timeseries?interval=hour");
      expect(hourly.buckets.length).toBeGreaterThanOrEqual(72);
      await page
        .getByRole("img", { name: /Chart of calls by hour/ })
        .locator("canvas")
        .waitFor({ timeout: WAIT_MS });
      await page.getByText("The figures by hour").click();
      const hourRows = await shownRows(page, "Calls by hour");
      const busyHours = (hourly.buckets as { start: string; calls: number }[]).filter((b) => b.calls > 0);
      expect(hourRows).toEqual(busyHours.map((b) => [`${b.start.slice(5, 10)} ${b.start.slice(11, 16)}`, b.calls]));

      // The tables: the API's rows, in its order (busiest first), with the API's totals.
      const endpoints: Row[] = await usage(t, who, "/breakdown?groupBy=endpoint");
      expect(await shownRows(page, "By endpoint")).toEqual(endpoints.map((r) => [r.label, r.calls]));
      expect(endpoints.map((r) => r.label)).toContain("GET /api/v1/users");
      const keys: Row[] = await usage(t, who, "/breakdown?groupBy=apiKey");
      expect(await shownRows(page, "By API key")).toEqual(keys.map((r) => [`${r.label}${r.key}`, r.calls]));
      expect(keys.map((r) => r.label)).toEqual([expect.stringMatching(/^Key /), "Reporting key"]);
      await screenshot(page, "usage-01-all-keys");
      await expectAccessible(page);

      // The month's webhook allowance: the API's figures, against the plan's allowance.
      const allowance = await t.call({
        method: "GET",
        url: "/api/v1/usage/allowance",
        headers: { authorization: who.bearer },
      });
      expect(allowance.statusCode).toBe(200);
      const month = allowance.json().data;
      const section = page.getByRole("region", { name: "Webhook allowance" });
      const used = section.locator('.card[data-stat="allowanceUsed"]');
      await expect.poll(() => used.getAttribute("data-value"), { timeout: WAIT_MS }).toBe(String(month.used));
      expect(await used.locator(".card-compare").textContent()).toContain(
        `of ${Number(month.allowance).toLocaleString("en-US")}`,
      );
      expect(await section.locator('.card[data-stat="allowanceHeld"]').getAttribute("data-value")).toBe(
        String(month.held),
      );

      // By day: a chip changes the address, and the figures follow the API's daily buckets.
      await page.getByRole("link", { name: "By day" }).click();
      await page.waitForURL((url) => url.searchParams.get("interval") === "day");
      expect(await page.getByRole("link", { name: "By hour" }).getAttribute("class")).toBe("chip");
      expect(await page.getByRole("link", { name: "By hour" }).getAttribute("aria-current")).toBeNull();
      expect(await page.getByRole("link", { name: "By day" }).getAttribute("aria-current")).toBe("page");
      await page
        .getByRole("img", { name: /Chart of calls by day/ })
        .locator("canvas")
        .waitFor({ timeout: WAIT_MS });
      await page.getByText("The figures by day").click();
      const daily = await usage(t, who, "/timeseries?interval=day");
      const busyDays = (daily.buckets as { start: string; calls: number }[]).filter((b) => b.calls > 0);
      expect(await shownRows(page, "Calls by day")).toEqual(busyDays.map((b) => [b.start.slice(0, 10), b.calls]));

      // Sorted by endpoint name, in the address: the same rows in that order.
      await page
        .locator("section", { has: page.getByRole("heading", { name: "By endpoint" }) })
        .getByRole("button", { name: "Endpoint" })
        .click();
      await page.waitForURL((url) => url.searchParams.get("endpointSort") === "label.desc");
      const byName = [...endpoints].sort((a, b) => b.label.localeCompare(a.label)).map((r) => [r.label, r.calls]);
      await expect.poll(() => shownRows(page, "By endpoint"), { timeout: WAIT_MS }).toEqual(byName);

      // One key: every figure narrows to its calls (the address names it, so it can be shared).
      await page.getByLabel("API key", { exact: true }).selectOption({ label: "Reporting key" });
      await page.waitForURL((url) => url.searchParams.get("key") === second.id);
      const one = await usage(t, who, `/stats?apiTokenId=${second.id}`);
      await expect
        .poll(() => shownCards(page), { timeout: WAIT_MS })
        .toEqual({ totalCalls: 8, rateLimited: 0, serverErrors: 0, uniqueIps: one.uniqueIps });
      const oneEndpoints: Row[] = await usage(t, who, `/breakdown?groupBy=endpoint&apiTokenId=${second.id}`);
      await expect
        .poll(() => shownRows(page, "By endpoint"), { timeout: WAIT_MS })
        .toEqual([...oneEndpoints].sort((a, b) => b.label.localeCompare(a.label)).map((r) => [r.label, r.calls]));
      await screenshot(page, "usage-02-one-key-by-day");
      await expectAccessible(page);

      // The shared address opens the same view after a reload.
      await page.reload();
      await page.getByRole("heading", { name: "API usage", level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(await page.getByLabel("API key", { exact: true }).inputValue()).toBe(second.id);
      expect((await shownCards(page)).totalCalls).toBe(8);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("says so when no key was used in the window", { timeout: 60_000 }, async () => {
    const quiet = await seedTenancy(t);
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, quiet);
      await page.getByRole("link", { name: "Usage" }).click();
      await page.getByRole("heading", { name: "API usage", level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(await shownCards(page)).toEqual({ totalCalls: 0, rateLimited: 0, serverErrors: 0, uniqueIps: 0 });
      await expect.poll(() => page.getByText("No calls in the last 72 hours.").count(), { timeout: WAIT_MS }).toBe(4);
      await screenshot(page, "usage-03-empty");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("tells a person without usage.read what is missing", { timeout: 60_000 }, async () => {
    const reader = await seedTenancy(t, { permissions: ["reports.read"] });
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [403] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, reader);
      await page.getByRole("link", { name: "Usage" }).click();
      await page.getByRole("heading", { name: "API usage", level: 1 }).waitFor({ timeout: WAIT_MS });
      await expect
        .poll(() => page.getByRole("alert").first().textContent(), { timeout: WAIT_MS })
        .toContain("You do not have permission for this");
      await screenshot(page, "usage-04-forbidden");
      await expectAccessible(page);
      expect(log.pageErrors).toEqual([]);
      expect(log.external).toEqual([]);
      expect(log.ownFailures).toEqual([]);
      expect(log.consoleErrors.filter((e) => !e.includes("status of 403"))).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
