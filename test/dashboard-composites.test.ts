import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { DAY_MS } from "../src/platform/durations.js";
import type { Tenancy, TestApp } from "./helpers/app.js";
import { hasChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  gotoWhenIdle,
  localDay,
  openDashboardPage,
  pickFromList,
  screenshot,
  shiftDay,
  signInSettled,
  startDashboard,
  stopDashboard,
  trackRequests,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// Accounts and links (/accounts) end to end: every row, its order and its figures must be the
// composite endpoints' own answer for the same parameters, asked as a third-party client would.

const PAGE_SIZE = 25;
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

interface ApiRow {
  id: number;
  name: string;
  metrics: Record<string, number>;
  comparisonMetrics: Record<string, number>;
}

interface ApiMeta {
  currency: string;
  unconverted: { currency: string; conversions: number }[];
}

/** An amount as the dashboard shows it: Intl's currency style. */
const money = (value: number | undefined, currency: string) =>
  new Intl.NumberFormat("en-US", { style: "currency", currency }).format(value ?? Number.NaN);

interface ShownRow {
  id: number;
  name: string;
  metrics: Record<string, { value: number; previous: number }>;
}

describe.skipIf(!hasChromium)("dashboard: accounts and links", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;
  const today = day(Date.now());
  const from = day(Date.now() - 29 * DAY_MS);
  const previousTo = day(Date.now() - 30 * DAY_MS);
  const previousFrom = day(Date.now() - 59 * DAY_MS);

  beforeAll(async () => {
    // More accounts than a page holds, with traffic in both the default period and the one before.
    ({ t, who, browser, origin } = await startDashboard(
      async (app, tenant) => {
        await generateTraffic(app.ctx.db, tenant.tenantId, {
          days: 60,
          clicks: 3000,
          accounts: 32,
          now: app.clock.now(),
        });
        // A dollar rate, so the traffic's euros convert; none for its pounds, which are left out.
        const res = await app.call({
          method: "PUT",
          url: "/api/v1/exchange-rates",
          headers: { authorization: tenant.apiKey },
          payload: { date: "2000-01-03", rates: { USD: 1.25 } },
        });
        expect(res.statusCode, res.body).toBe(200);
      },
      { app: { rateLimit: { max: 100_000 } } },
    ));
  }, 180_000);

  afterAll(() => stopDashboard({ t, browser }));

  /** The endpoint's page for these parameters. */
  async function apiPage(path: string, params: Record<string, string | number>) {
    const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
    const res = await t.call({
      method: "GET",
      url: `/api/v1/composites/${path}?${query}`,
      headers: { authorization: who.bearer },
    });
    expect(res.statusCode, res.body).toBe(200);
    return {
      rows: res.json().data as ApiRow[],
      total: res.json().pagination?.total ?? 0,
      meta: (res.json() as unknown as { meta: ApiMeta }).meta,
    };
  }

  const defaults = {
    metricsFrom: from,
    metricsTo: today,
    comparisonFrom: previousFrom,
    comparisonTo: previousTo,
    limit: PAGE_SIZE,
  };

  /** The table's rows as shown: id (from the account's link), name and each metric with its comparison. */
  function shownRows(page: Page): Promise<ShownRow[]> {
    return page.$$eval("table.data-table tbody tr", (trs) =>
      trs.map((tr) => {
        const link = tr.querySelector<HTMLAnchorElement>("td:first-child a");
        const metrics: Record<string, { value: number; previous: number }> = {};
        for (const cell of Array.from(tr.querySelectorAll<HTMLElement>(".metric"))) {
          metrics[String(cell.dataset.metric)] = {
            value: Number(cell.dataset.value),
            previous: Number(cell.dataset.previous),
          };
        }
        return {
          id: link ? Number(new URL(link.href).pathname.split("/").pop()) : 0,
          name: (link ?? tr.querySelector(".row-name"))?.textContent ?? "",
          metrics,
        };
      }),
    );
  }

  /** The rows show exactly the API's rows, in its order, with its figures for both periods. */
  function compare(shown: ShownRow[], api: ApiRow[], withIds: boolean) {
    if (withIds) expect(shown.map((r) => r.id)).toEqual(api.map((r) => r.id));
    expect(shown.map((r) => r.name)).toEqual(api.map((r) => r.name));
    for (const [i, row] of shown.entries()) {
      const expected = api[i] as ApiRow;
      expect(Object.keys(row.metrics).length).toBeGreaterThan(0);
      for (const [metric, figures] of Object.entries(row.metrics)) {
        expect(figures, `${row.name} ${metric}`).toEqual({
          value: expected.metrics[metric],
          previous: expected.comparisonMetrics[metric],
        });
      }
    }
  }

  /** Waits until the page shows the API's rows (a navigation renders a moment after the address changes). */
  async function expectShown(page: Page, api: ApiRow[], withIds = true): Promise<ShownRow[]> {
    let shown: ShownRow[] = [];
    const same = async () => {
      shown = await shownRows(page);
      try {
        compare(shown, api, withIds);
        return true;
      } catch {
        return false;
      }
    };
    await expect
      .poll(same, { timeout: WAIT_MS })
      .toBe(true)
      .catch(() => compare(shown, api, withIds));
    return shown;
  }

  const searchOf = (page: Page) => new URL(page.url()).searchParams;
  const accountsApi = (params: Record<string, string | number>) =>
    apiPage("accounts/metrics", { ...defaults, ...params });

  it("shows the API's accounts with both periods, sorts both ways, searches and pages", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      await page.getByRole("link", { name: "Accounts and links" }).click();
      await page.getByRole("heading", { name: "Accounts and links", level: 1 }).waitFor({ timeout: WAIT_MS });

      // Default: the last 30 days against the 30 before, most clicks first.
      const byClicks = await accountsApi({ sortBy: "clicks" });
      expect(byClicks.total).toBeGreaterThan(PAGE_SIZE);
      const first = await expectShown(page, byClicks.rows);
      expect(first.some((r) => (r.metrics.clicks?.value ?? 0) > 0 && (r.metrics.clicks?.previous ?? 0) > 0)).toBe(true);
      expect(await page.getByTestId("period-summary").textContent()).toContain(`${previousFrom} to ${previousTo}`);
      await expect
        .poll(() => page.getByRole("navigation", { name: "Accounts pages" }).textContent())
        .toContain(`1–${PAGE_SIZE} of ${byClicks.total}`);
      await screenshot(page, "composites-01-accounts");
      await expectAccessible(page);

      // A header toggles the order; the API sorts the whole filtered set, lowest first, then highest.
      await page.getByRole("button", { name: "Clicks" }).click();
      await page.waitForURL((url) => url.searchParams.get("dir") === "asc");
      const ascending = await expectShown(page, (await accountsApi({ sortBy: "+clicks" })).rows);
      expect(ascending.map((r) => r.id)).not.toEqual(first.map((r) => r.id));
      expect(await page.getByRole("columnheader", { name: /Clicks/ }).getAttribute("aria-sort")).toBe("ascending");
      await page.getByRole("button", { name: "Clicks" }).click();
      await page.waitForURL((url) => url.searchParams.get("dir") === "desc");
      await expectShown(page, byClicks.rows);

      // Any metric the API sorts by, from the sort control: its column joins the table.
      await page.getByLabel("Sort by").selectOption("revShareCommission");
      await page.waitForURL((url) => url.searchParams.get("sort") === "revShareCommission");
      const byRevShare = await expectShown(page, (await accountsApi({ sortBy: "revShareCommission" })).rows);
      expect(Object.keys(byRevShare[0]?.metrics ?? {})).toContain("revShareCommission");
      await page.getByLabel("Order").selectOption("asc");
      await page.waitForURL((url) => url.searchParams.get("dir") === "asc");
      await expectShown(page, (await accountsApi({ sortBy: "+revShareCommission" })).rows);

      // By name, both ways.
      await page.getByRole("button", { name: "Account", exact: true }).click();
      await page.waitForURL((url) => url.searchParams.get("sort") === "name" && url.searchParams.get("dir") === "desc");
      await expectShown(page, (await accountsApi({ sortBy: "-name" })).rows);
      await page.getByRole("button", { name: "Account", exact: true }).click();
      await page.waitForURL((url) => url.searchParams.get("dir") === "asc");
      await expectShown(page, (await accountsApi({ sortBy: "name" })).rows);

      // Paging over the whole sorted set.
      await page.getByRole("button", { name: "Next" }).click();
      await page.waitForURL((url) => url.searchParams.get("offset") === String(PAGE_SIZE));
      const second = await expectShown(page, (await accountsApi({ sortBy: "name", offset: PAGE_SIZE })).rows);
      expect(second.length).toBeGreaterThan(0);
      await screenshot(page, "composites-02-accounts-page-2");

      // Search narrows (and starts at the first page); the address says so.
      await page.getByLabel("Search account names").fill("velvet");
      await page.getByRole("button", { name: "Search", exact: true }).click();
      await page.waitForURL((url) => url.searchParams.get("q") === "velvet" && !url.searchParams.has("offset"));
      const apiFound = await accountsApi({ sortBy: "name", search: "velvet" });
      const found = await expectShown(page, apiFound.rows);
      expect(found.length).toBeGreaterThan(0);
      expect(apiFound.total).toBeLessThan(byClicks.total);
      for (const row of found) expect(row.name.toLowerCase()).toContain("velvet");
      await screenshot(page, "composites-03-search");

      // A search that finds nothing says so.
      await page.getByLabel("Search account names").fill("no such account anywhere");
      await page.getByRole("button", { name: "Search", exact: true }).click();
      await page.getByText("No account matches this search.").waitFor({ timeout: WAIT_MS });
      await expectAccessible(page);

      // A shared address opens the same view: a custom comparison period, inactive accounts.
      const custom = {
        from: day(Date.now() - 13 * DAY_MS),
        to: today,
        compareFrom: day(Date.now() - 50 * DAY_MS),
        compareTo: day(Date.now() - 40 * DAY_MS),
      };
      const customApi = (comparisonFrom: string, comparisonTo: string) =>
        apiPage("accounts/metrics", {
          metricsFrom: custom.from,
          metricsTo: custom.to,
          comparisonFrom,
          comparisonTo,
          limit: PAGE_SIZE,
          sortBy: "signups",
          status: "inactive",
        });
      await gotoWhenIdle(
        page,
        `${origin}/accounts?${new URLSearchParams({ ...custom, status: "inactive", sort: "signups" })}`,
      );
      await page.getByRole("heading", { name: "Accounts and links", level: 1 }).waitFor({ timeout: WAIT_MS });
      const inactive = await customApi(custom.compareFrom, custom.compareTo);
      expect(inactive.rows.length).toBeGreaterThan(0);
      await expectShown(page, inactive.rows);
      expect(await page.getByLabel("Compare with").inputValue()).toBe("custom");
      expect(await page.getByLabel("Account status").inputValue()).toBe("inactive");

      // The period form: a custom comparison chosen by hand.
      const [compareFrom, compareTo] = [day(Date.now() - 27 * DAY_MS), day(Date.now() - 14 * DAY_MS)];
      await page.getByLabel("Comparison from").fill(compareFrom);
      await page.getByLabel("Comparison to").fill(compareTo);
      await page.getByRole("button", { name: "Apply" }).click();
      await page.waitForURL((url) => url.searchParams.get("compareTo") === compareTo);
      await expectShown(page, (await customApi(compareFrom, compareTo)).rows);
      await screenshot(page, "composites-04-custom-comparison");
      await expectAccessible(page);
      // Back to the previous period: the comparison leaves the address.
      await page.getByLabel("Compare with").selectOption("previous");
      await page.getByRole("button", { name: "Apply" }).click();
      await page.waitForURL((url) => !url.searchParams.has("compareFrom"));
      expect(searchOf(page).get("from")).toBe(custom.from);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("shows an account's links with the API's figures, sorted and searched", { timeout: 120_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      await gotoWhenIdle(page, `${origin}/accounts`);
      const accounts = await expectShown(page, (await accountsApi({ sortBy: "clicks" })).rows);
      const top = accounts[0] as ShownRow;
      await page.getByRole("link", { name: top.name, exact: true }).click();
      await page.getByRole("heading", { name: top.name, level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(new URL(page.url()).pathname).toBe(`/accounts/${top.id}`);

      const linksApi = (params: Record<string, string | number>) =>
        apiPage("accounts/links/metrics", { ...defaults, accountId: top.id, ...params });
      const apiLinks = await linksApi({ sortBy: "clicks" });
      expect(apiLinks.rows.length).toBeGreaterThan(0);
      await expectShown(page, apiLinks.rows, false);
      await screenshot(page, "composites-05-account-links");
      await expectAccessible(page);

      // Lowest clicks first, as the API orders them.
      await page.getByRole("button", { name: "Clicks" }).click();
      await page.waitForURL((url) => url.searchParams.get("dir") === "asc");
      await expectShown(page, (await linksApi({ sortBy: "+clicks" })).rows, false);

      // Search among this account's links only.
      const needle = (apiLinks.rows[0] as ApiRow).name.split(" ")[0] as string;
      await page.getByLabel("Search link names").fill(needle);
      await page.getByRole("button", { name: "Search", exact: true }).click();
      await page.waitForURL((url) => url.searchParams.get("q") === needle);
      const found = await expectShown(page, (await linksApi({ sortBy: "+clicks", search: needle })).rows, false);
      expect(found.length).toBeGreaterThan(0);

      // Back to the accounts by the breadcrumb, keeping no filter of the links.
      await page.locator(".breadcrumb").getByRole("link", { name: "Accounts and links" }).click();
      await page.getByRole("heading", { name: "Accounts and links", level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(searchOf(page).has("q")).toBe(false);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("shows the amounts in the answer's currency, picks another kept in the address, and says what was left out", {
    timeout: 150_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    trackRequests(page);
    /** Each row's commission as read: its value and the comparison period's. */
    const shownCommission = () =>
      page.$$eval('table.data-table tbody .metric[data-metric="commission"]', (cells) =>
        cells.map((c) => [
          c.querySelector(".metric-value")?.textContent ?? "",
          c.querySelector(".metric-compare")?.textContent ?? "",
        ]),
      );
    const expectedCommission = (rows: ApiRow[], currency: string) =>
      rows.map((r) => [
        money(r.metrics.commission, currency),
        `, was ${money(r.comparisonMetrics.commission, currency)}`,
      ]);
    const warningText = (meta: ApiMeta) =>
      `Left out of the totals in ${meta.currency} for want of an exchange rate: ${meta.unconverted
        .map(
          (u, i) =>
            `${u.conversions} ${i === 0 ? (u.conversions === 1 ? "conversion " : "conversions ") : ""}in ${u.currency}`,
        )
        .join(", ")}. Add the rate under Settings.`;
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      await gotoWhenIdle(page, `${origin}/accounts`);

      // The reporting currency (USD): every amount with its symbol; the pounds, without a rate, named.
      const inDollars = await accountsApi({ sortBy: "clicks" });
      expect(inDollars.meta.currency).toBe("USD");
      expect(inDollars.meta.unconverted.map((u) => u.currency)).toEqual(["GBP"]);
      await expectShown(page, inDollars.rows);
      await expect.poll(shownCommission, { timeout: WAIT_MS }).toEqual(expectedCommission(inDollars.rows, "USD"));
      const warning = page.getByTestId("unconverted");
      expect(await warning.textContent()).toBe(warningText(inDollars.meta));

      // Euros: asked of the API, in the address, every amount in them.
      const asked = page.waitForRequest(
        (r) =>
          r.url().includes("/api/v1/composites/accounts/metrics") &&
          new URL(r.url()).searchParams.get("currency") === "EUR",
        { timeout: WAIT_MS },
      );
      await page.getByLabel("Currency", { exact: true }).selectOption("EUR");
      await asked;
      await page.waitForURL((url) => url.searchParams.get("currency") === "EUR");
      const inEuros = await accountsApi({ sortBy: "clicks", currency: "EUR" });
      expect(inEuros.meta.currency).toBe("EUR");
      await expect.poll(shownCommission, { timeout: WAIT_MS }).toEqual(expectedCommission(inEuros.rows, "EUR"));
      await expect.poll(() => warning.textContent(), { timeout: WAIT_MS }).toBe(warningText(inEuros.meta));
      await screenshot(page, "composites-07-accounts-in-euros");
      await expectAccessible(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "composites-08-accounts-in-euros-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1024, height: 800 });

      // An account's links keep the currency, and so does the way back.
      const top = inEuros.rows[0] as ApiRow;
      await page.getByRole("link", { name: top.name, exact: true }).click();
      await page.getByRole("heading", { name: top.name, level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(new URL(page.url()).searchParams.get("currency")).toBe("EUR");
      const links = await apiPage("accounts/links/metrics", {
        ...defaults,
        accountId: top.id,
        sortBy: "clicks",
        currency: "EUR",
      });
      await expectShown(page, links.rows, false);
      await expect.poll(shownCommission, { timeout: WAIT_MS }).toEqual(expectedCommission(links.rows, "EUR"));
      expect(await page.getByLabel("Currency", { exact: true }).inputValue()).toBe("EUR");
      await screenshot(page, "composites-09-links-in-euros");
      await expectAccessible(page);
      await page.locator(".breadcrumb").getByRole("link", { name: "Accounts and links" }).click();
      await page.waitForURL((url) => url.pathname === "/accounts" && url.searchParams.get("currency") === "EUR");

      // Back to the reporting currency: the parameter leaves the address.
      await page.getByLabel("Currency", { exact: true }).selectOption("");
      await page.waitForURL((url) => url.pathname === "/accounts" && !url.searchParams.has("currency"));
      await expect.poll(shownCommission, { timeout: WAIT_MS }).toEqual(expectedCommission(inDollars.rows, "USD"));
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("reads the period in the zone picked, offers local presets, and carries the zone to an account's links", {
    timeout: 150_000,
  }, async () => {
    // The browser's clock is in Tokyo; the account's zone is UTC (unless set).
    const { context, page, log } = await openDashboardPage(browser, origin, { timezoneId: "Asia/Tokyo" });
    trackRequests(page);
    const asked = (path: string, zone: string, check: (query: URLSearchParams) => boolean = () => true) =>
      page.waitForRequest(
        (r) => {
          const u = new URL(r.url());
          return (
            u.pathname === `/api/v1/composites/${path}` &&
            u.searchParams.get("timeZone") === zone &&
            check(u.searchParams)
          );
        },
        { timeout: WAIT_MS },
      );
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      const inUtc = asked("accounts/metrics", "UTC");
      await gotoWhenIdle(page, `${origin}/accounts`);
      expect(new URL((await inUtc).url()).searchParams.get("metricsTo")).toBe(localDay("UTC"));
      const picker = page.getByLabel("Time zone", { exact: true });
      await expect.poll(() => picker.inputValue(), { timeout: WAIT_MS }).toBe("UTC");
      // The default period is the last 30 days: its chip shows chosen.
      const presets = page.getByRole("list", { name: "Periods" });
      expect(await presets.getByRole("button", { name: "Last 30 days" }).getAttribute("aria-pressed")).toBe("true");

      // This browser's zone, picked from the list: the last 30 days of Tokyo, compared with the 30 before.
      const tokyoToday = localDay("Asia/Tokyo");
      const inTokyo = asked("accounts/metrics", "Asia/Tokyo");
      await pickFromList(picker, "Asia/Tokyo");
      const tokyoQuery = new URL((await inTokyo).url()).searchParams;
      await page.waitForURL((url) => url.searchParams.get("tz") === "Asia/Tokyo");
      const tokyo = {
        metricsFrom: shiftDay(tokyoToday, -29),
        metricsTo: tokyoToday,
        comparisonFrom: shiftDay(tokyoToday, -59),
        comparisonTo: shiftDay(tokyoToday, -30),
      };
      expect(
        Object.fromEntries([...tokyoQuery].filter(([k]) => k.startsWith("metrics") || k.startsWith("comparison"))),
      ).toEqual(tokyo);
      const tokyoRows = await apiPage("accounts/metrics", {
        ...tokyo,
        limit: PAGE_SIZE,
        sortBy: "clicks",
        timeZone: "Asia/Tokyo",
      });
      expect(tokyoRows.meta).toMatchObject({ timeZone: "Asia/Tokyo" });
      await expectShown(page, tokyoRows.rows);
      await expect
        .poll(() => page.getByTestId("period-summary").textContent(), { timeout: WAIT_MS })
        .toContain(`${tokyo.metricsFrom} to ${tokyo.metricsTo} (Asia/Tokyo)`);

      // A preset: last month where Tokyo's clock is, against the period of the same length before it.
      const monthStart = `${tokyoToday.slice(0, 7)}-01`;
      const lastMonth = { from: `${shiftDay(monthStart, -1).slice(0, 7)}-01`, to: shiftDay(monthStart, -1) };
      const byMonth = asked("accounts/metrics", "Asia/Tokyo", (q) => q.get("metricsFrom") === lastMonth.from);
      await presets.getByRole("button", { name: "Last month" }).click();
      expect(new URL((await byMonth).url()).searchParams.get("metricsTo")).toBe(lastMonth.to);
      await page.waitForURL(
        (url) => url.searchParams.get("from") === lastMonth.from && url.searchParams.get("to") === lastMonth.to,
      );
      expect(await presets.getByRole("button", { name: "Last month" }).getAttribute("aria-pressed")).toBe("true");
      await page.setViewportSize({ width: 1280, height: 900 });
      await screenshot(page, "composites-10-tokyo-last-month");
      await expectAccessible(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "composites-11-tokyo-last-month-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      // The narrowest phone the dashboard is for: nothing runs off the page there either.
      await page.setViewportSize({ width: 360, height: 780 });
      await screenshot(page, "composites-11-tokyo-last-month-360px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      await page.setViewportSize({ width: 1024, height: 800 });

      // An account's links keep the zone and the period; so does the way back.
      const top = (await shownRows(page))[0] as ShownRow;
      const links = asked("accounts/links/metrics", "Asia/Tokyo", (q) => q.get("metricsFrom") === lastMonth.from);
      await page.getByRole("link", { name: top.name, exact: true }).click();
      await page.getByRole("heading", { name: top.name, level: 1 }).waitFor({ timeout: WAIT_MS });
      await links;
      expect(new URL(page.url()).searchParams.get("tz")).toBe("Asia/Tokyo");
      await expect.poll(() => picker.inputValue(), { timeout: WAIT_MS }).toBe("Asia/Tokyo");
      await page.locator(".breadcrumb").getByRole("link", { name: "Accounts and links" }).click();
      await page.waitForURL((url) => url.pathname === "/accounts" && url.searchParams.get("tz") === "Asia/Tokyo");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("says so when an account does not exist", { timeout: 60_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [404] });
    trackRequests(page);
    try {
      await page.goto(`${origin}/sign-in`);
      await signInSettled(page, who);
      await gotoWhenIdle(page, `${origin}/accounts/999999`);
      await expect.poll(() => page.getByRole("alert").textContent(), { timeout: WAIT_MS }).toContain("999999");
      await screenshot(page, "composites-06-unknown-account");
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
