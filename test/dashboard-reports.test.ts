import { readFile } from "node:fs/promises";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { DAY_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { CHROMIUM, hasChromium } from "./helpers/chromium.js";
import {
  dropRefusals,
  expectAccessible,
  expectClean,
  localDay,
  openDashboardPage,
  pickFromList,
  screenshot,
  shiftDay,
  signIn,
  startDashboard,
  stopDashboard,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";
import { putUnitRates } from "./helpers/reports.js";

// The reports page end to end: the real service on loopback, its build, Chromium. Every figure
// the table, its totals, the chart and the CSV show must be the API's own answer for the same
// parameters, asked here as a third-party client would.
if (!hasChromium) {
  console.warn(`dashboard reports tests skipped: they need Chromium at ${CHROMIUM} (Debian package 'chromium').`);
}

const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const FIELDS = ["brand", "trafficSource"];
const STATS = ["clicks", "signups", "commission", "conversionRate"];

type Row = Record<string, unknown>;

async function performance(t: TestApp, who: Tenancy, query: Record<string, string>) {
  const res = await t.call({
    method: "GET",
    url: `/api/v1/reports/events/performance?${new URLSearchParams(query)}`,
    headers: { authorization: who.bearer },
  });
  return { status: res.statusCode, body: res.json() };
}

async function apiRows(t: TestApp, who: Tenancy, query: Record<string, string>): Promise<Row[]> {
  const { status, body } = await performance(t, who, query);
  expect(status, body.message).toBe(200);
  return body.data as Row[];
}

const text = (value: unknown) => (value === null || value === undefined ? "" : String(value));

/** The API's rows as the table carries them: each column's value, as text. */
const asTable = (rows: Row[], fields: string[], stats: string[]) =>
  rows.map((row) => [...fields, ...stats].map((column) => text(row[column])));

/** The table's body and footer as the page shows them, by the API values each cell carries. */
async function shownTable(page: Page): Promise<{ rows: string[][]; totals: string[] }> {
  return page.evaluate(() => {
    const values = (root: Element) =>
      Array.from(root.querySelectorAll("span[data-value]")).map((s) => s.getAttribute("data-value") ?? "");
    const table = document.querySelector(".report-results table");
    if (!table) return { rows: [], totals: [] };
    return {
      rows: Array.from(table.querySelectorAll("tbody tr")).map(values),
      totals: Array.from(table.querySelectorAll("tfoot tr")).flatMap(values),
    };
  });
}

/** RFC 4180, as a spreadsheet reads it. */
function parseCsv(csv: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let cell = "";
  let quoted = false;
  for (let i = 0; i < csv.length; i++) {
    const c = csv[i];
    if (quoted) {
      if (c === '"' && csv[i + 1] === '"') {
        cell += '"';
        i++;
      } else if (c === '"') quoted = false;
      else cell += c;
    } else if (c === '"') quoted = true;
    else if (c === ",") {
      row.push(cell);
      cell = "";
    } else if (c === "\r" && csv[i + 1] === "\n") {
      row.push(cell);
      rows.push(row);
      row = [];
      cell = "";
      i++;
    } else cell += c;
  }
  return rows;
}

/** An amount as the dashboard shows it: Intl's currency style, the currency's decimals (up to 4 in reports). */
const money = (value: unknown, currency: string, precise = false) =>
  new Intl.NumberFormat("en-US", {
    style: "currency",
    currency,
    ...(precise ? { minimumFractionDigits: 2, maximumFractionDigits: 4 } : {}),
  }).format(Number(value));

/** The table's cells as a person reads them: each body row's texts, and the totals row's. */
async function shownTexts(page: Page): Promise<{ rows: string[][]; totals: string[] }> {
  return page.evaluate(() => {
    const table = document.querySelector(".report-results table");
    if (!table) return { rows: [], totals: [] };
    // The last column links each row to its clicks: not a figure of the report.
    const skip = Array.from(table.querySelectorAll("thead th")).findIndex((th) => th.textContent === "Click log");
    const texts = (tr: Element) =>
      Array.from(tr.querySelectorAll("td"))
        .map((td) => td.textContent ?? "")
        .filter((_, i) => i !== skip);
    return {
      rows: Array.from(table.querySelectorAll("tbody tr")).map(texts),
      totals: Array.from(table.querySelectorAll("tfoot tr")).flatMap(texts),
    };
  });
}

/** The warning a report's `meta.unconverted` makes, in the words the page uses. */
const unconvertedText = (meta: { currency: string; unconverted: { currency: string; conversions: number }[] }) =>
  `Left out of the totals in ${meta.currency} for want of an exchange rate: ${meta.unconverted
    .map(
      (u, i) =>
        `${u.conversions} ${i === 0 ? (u.conversions === 1 ? "conversion " : "conversions ") : ""}in ${u.currency}`,
    )
    .join(", ")}. Add the rate under Settings.`;

describe.skipIf(!hasChromium)("dashboard reports page", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;
  const now = Date.now();
  // A shared window with an exact end: whole days, then up to noon (UTC) yesterday.
  const from = day(now - 20 * DAY_MS);
  const to = `${day(now - DAY_MS)}T12:00:00Z`;
  const window = { conversionDateFrom: from, conversionDateTo: to };

  beforeAll(async () => {
    ({ t, who, browser, origin } = await startDashboard(async (app, tenant) => {
      await generateTraffic(app.ctx.db, tenant.tenantId, { days: 30, clicks: 2000, now: app.clock.now() });
      // Rates for the traffic's dollars and pounds (its euros need none), none for yen: one
      // deposit in JPY, two days ago, is left out of every sum of a window that holds it.
      await putUnitRates(app, tenant);
      const signup = await app.call({
        method: "GET",
        url: "/api/v1/conversions?type=Signup&limit=1",
        headers: { authorization: tenant.apiKey },
      });
      const deposit = await app.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: tenant.apiKey },
        payload: {
          type: "Deposit",
          clickId: signup.json().data[0]?.clickId,
          value: "10000",
          currency: "JPY",
          occurredAt: new Date(app.clock.now().getTime() - 2 * DAY_MS).toISOString(),
        },
      });
      expect(deposit.statusCode, deposit.body).toBe(201);
    }));
  }, 180_000);

  afterAll(() => stopDashboard({ t, browser }));

  it("opens a shared report with the API's figures, sorts, charts and downloads them", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      // The overview's chart is drawn first: leaving while its code loads would abort that request.
      await page
        .getByRole("img", { name: /Chart of daily/ })
        .locator("canvas")
        .waitFor({ timeout: WAIT_MS });
      const shared = new URLSearchParams({
        fields: FIELDS.join(","),
        stats: STATS.join(","),
        range: "custom",
        from,
        to,
      });
      await page.goto(`${origin}/reports?${shared}`);
      await page.getByRole("heading", { name: "Reports", level: 1 }).waitFor({ timeout: WAIT_MS });

      // The rows and totals the API answers for the same parameters.
      const base = { ...window, stats: STATS.join(",") };
      const rows = await apiRows(t, who, { ...base, fields: FIELDS.join(","), offset: "0", limit: "100" });
      const [totals] = await apiRows(t, who, base);
      expect(rows.length).toBeGreaterThan(1);
      expect(Number(totals?.clicks)).toBeGreaterThan(0);
      const expectedTotals = STATS.map((s) => text(totals?.[s]));
      await expect
        .poll(() => shownTable(page), { timeout: WAIT_MS })
        .toEqual({ rows: asTable(rows, FIELDS, STATS), totals: expectedTotals });
      // As a person reads it: the API's figures, formatted.
      const firstClicks = page.locator(".report-results tbody tr").first().locator("td").nth(2);
      expect(await firstClicks.textContent()).toBe(new Intl.NumberFormat("en-US").format(Number(rows[0]?.clicks)));
      expect(await page.getByLabel("Period").inputValue()).toBe("custom");
      expect(await page.getByLabel("To", { exact: true }).inputValue()).toBe(day(now - DAY_MS));
      // The account's zone (UTC unless set): the instant's time on its clock.
      expect(await page.getByLabel("To time", { exact: true }).inputValue()).toBe("12:00");
      await screenshot(page, "reports-01-shared-link");
      await expectAccessible(page);

      // Sorting is the API's, over every row: highest commission first, then the reverse.
      const commissionHeader = page.locator("th", {
        has: page.getByRole("button", { name: "Commission", exact: true }),
      });
      await page.getByRole("button", { name: "Commission", exact: true }).click();
      await page.waitForURL((url) => url.searchParams.get("sortBy") === "commission");
      const byCommission = await apiRows(t, who, { ...base, fields: FIELDS.join(","), sortBy: "commission" });
      await expect
        .poll(() => shownTable(page), { timeout: WAIT_MS })
        .toEqual({ rows: asTable(byCommission, FIELDS, STATS), totals: expectedTotals });
      expect(await commissionHeader.getAttribute("aria-sort")).toBe("descending");
      await page.getByRole("button", { name: "Commission", exact: true }).click();
      await page.waitForURL((url) => url.searchParams.get("sortBy") === "+commission");
      const ascending = await apiRows(t, who, { ...base, fields: FIELDS.join(","), sortBy: "+commission" });
      await expect
        .poll(() => shownTable(page), { timeout: WAIT_MS })
        .toEqual({ rows: asTable(ascending, FIELDS, STATS), totals: expectedTotals });
      expect(await commissionHeader.getAttribute("aria-sort")).toBe("ascending");

      // A time breakdown: the chart, one bar per day the API answers, and the rows by day too.
      await page.getByRole("checkbox", { name: "Day", exact: true }).check();
      await page.waitForURL((url) => url.searchParams.get("fields") === "brand,trafficSource,date");
      const chart = page.getByRole("img", { name: /^Chart of clicks per day/ });
      await chart.locator("canvas").waitFor({ timeout: WAIT_MS });
      const days = await apiRows(t, who, { ...window, fields: "date", stats: "clicks", sortBy: "date", limit: "999" });
      expect(days.length).toBeGreaterThan(10);
      expect(await chart.getAttribute("aria-label")).toContain(`${days.length} bars`);
      const fields = [...FIELDS, "date"];
      const byDay = await apiRows(t, who, { ...base, fields: fields.join(","), sortBy: "+commission", limit: "100" });
      await expect
        .poll(() => shownTable(page), { timeout: WAIT_MS })
        .toEqual({ rows: asTable(byDay, fields, STATS), totals: expectedTotals });
      await screenshot(page, "reports-02-by-day-with-chart");
      await expectAccessible(page);

      // The CSV is what the table shows: the API's values, the totals last.
      const [download] = await Promise.all([
        page.waitForEvent("download", { timeout: WAIT_MS }),
        page.getByRole("button", { name: "Download CSV" }).click(),
      ]);
      expect(download.suggestedFilename()).toMatch(/^performance-report-.+\.csv$/);
      const csv = await readFile(await download.path(), "utf8");
      expect(csv.startsWith("\uFEFF")).toBe(true);
      const [header, ...lines] = parseCsv(csv.slice(1));
      expect(header).toEqual([...fields, ...STATS]);
      expect(lines).toEqual([...asTable(byDay, fields, STATS), ["Total", "", "", ...expectedTotals]]);

      // The whole state is in the address: a reload shows the same report.
      await page.reload();
      await expect
        .poll(() => shownTable(page), { timeout: WAIT_MS })
        .toEqual({ rows: asTable(byDay, fields, STATS), totals: expectedTotals });

      // By the clicks' facts and sub-ids: the breakdowns offered, the API's rows.
      const facts = ["device", "os", "parameterA"];
      await page.goto(
        `${origin}/reports?${new URLSearchParams({ ...Object.fromEntries(shared), fields: facts.join(",") })}`,
      );
      for (const name of ["Device type", "OS", "Sub-id A (pa)"]) {
        expect(await page.getByRole("checkbox", { name, exact: true }).isChecked()).toBe(true);
      }
      // Labels inside a sentence keep an acronym's case.
      await page
        .getByText("Rows by device type, then OS, then sub-id A (pa).", { exact: true })
        .waitFor({ timeout: WAIT_MS });
      const byFacts = await apiRows(t, who, { ...base, fields: facts.join(","), offset: "0", limit: "100" });
      expect(new Set(byFacts.map((r) => r.device))).toContain("mobile");
      await expect
        .poll(() => shownTable(page), { timeout: WAIT_MS })
        .toEqual({ rows: asTable(byFacts, facts, STATS), totals: expectedTotals });
      // A click without a sub-id: "None" in its cell.
      await expect
        .poll(() => page.locator(".report-results tbody td", { hasText: /^None$/ }).count(), { timeout: WAIT_MS })
        .toBeGreaterThan(0);
      await screenshot(page, "reports-03-by-device-and-sub-id");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("names bad values in a link, and shows the API's message beside the range it refuses", {
    timeout: 120_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      // The overview's chart is drawn first: leaving while its code loads would abort that request.
      await page
        .getByRole("img", { name: /Chart of daily/ })
        .locator("canvas")
        .waitFor({ timeout: WAIT_MS });
      const link = new URLSearchParams({
        fields: "date,colour",
        stats: "clicks",
        limit: "5000",
        range: "custom",
        from,
        to,
      });
      await page.goto(`${origin}/reports?${link}`);
      const notes = page.locator(".report-notes");
      await notes.waitFor({ timeout: WAIT_MS });
      expect(await notes.textContent()).toContain("'colour'");
      expect(await notes.textContent()).toContain("'5000'");
      // The rest of the link still applies: by day, clicks only.
      const rows = await apiRows(t, who, { ...window, fields: "date", stats: "clicks", limit: "100" });
      await expect
        .poll(() => shownTable(page), { timeout: WAIT_MS })
        .toMatchObject({ rows: asTable(rows, ["date"], ["clicks"]) });

      // From after to: the API refuses it, and its message shows beside To.
      const later = day(now - 2 * DAY_MS);
      const earlier = day(now - 5 * DAY_MS);
      await page.getByLabel("From", { exact: true }).fill(later);
      await page.getByLabel("To time", { exact: true }).fill("");
      await page.getByLabel("To", { exact: true }).fill(earlier);
      await page.getByRole("button", { name: "Apply" }).click();
      await page.waitForURL((url) => url.searchParams.get("to") === earlier);
      const refused = await performance(t, who, {
        fields: "date",
        stats: "clicks",
        conversionDateFrom: later,
        conversionDateTo: earlier,
        offset: "0",
        limit: "100",
      });
      expect(refused.status).toBe(400);
      const apiMessage = (refused.body.data.errors as { path: string; message: string }[]).find(
        (e) => e.path === "conversionDateTo",
      )?.message;
      expect(apiMessage).toBeTruthy();
      const toInput = page.getByLabel("To", { exact: true });
      await expect.poll(() => toInput.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const describedBy = String(await toInput.getAttribute("aria-describedby"));
      const shown = await page.evaluate(
        (ids) => ids.map((id) => document.getElementById(id)?.textContent ?? "").join(" "),
        describedBy.split(" "),
      );
      expect(shown).toContain(apiMessage);
      expect(await page.getByLabel("From", { exact: true }).getAttribute("aria-invalid")).toBeNull();
      await screenshot(page, "reports-03-refused-range");
      await expectAccessible(page);
      // Chrome logs each refused request; nothing else went wrong.
      const ownErrors = log.consoleErrors.filter(
        (e) => !(e.includes("status of 400") && e.includes("/api/v1/reports/")),
      );
      expect(ownErrors).toEqual([]);
      expectClean({ ...log, consoleErrors: ownErrors });
    } finally {
      await context.close();
    }
  });

  it("says when nothing matches, for a reader without the catalog", { timeout: 120_000 }, async () => {
    const reader = await seedTenancy(t, { permissions: ["reports.read"] });
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, reader);
      // The overview has settled (no traffic: no chart to load) before the report opens.
      await page.getByText("No clicks or conversions in this period.").waitFor({ timeout: WAIT_MS });
      await page.goto(`${origin}/reports?${new URLSearchParams({ fields: "account", range: "7d", brandId: "1" })}`);
      await page.getByText("No clicks or conversions match").waitFor({ timeout: WAIT_MS });
      // Filters by id still apply without the catalog's names.
      expect(await page.getByRole("combobox", { name: "Brand" }).inputValue()).toBe("1");
      await page.getByText("Names need the catalog.read permission").waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("button", { name: "Download CSV" }).isDisabled()).toBe(true);
      await screenshot(page, "reports-04-empty-reader");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
  it("shows every amount in the report's currency, picks another kept in the address, and says what was left out", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
    const isReport = (url: string, currency: string | null) => {
      const u = new URL(url);
      return u.pathname === "/api/v1/reports/events/performance" && u.searchParams.get("currency") === currency;
    };
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page
        .getByRole("img", { name: /Chart of daily/ })
        .locator("canvas")
        .waitFor({ timeout: WAIT_MS });

      // The overview: revenue in the tenant's reporting currency (USD unless set), and the deposit
      // in yen, which has no rate, named next to the figures with the way to add one.
      const last30 = { conversionDateFrom: day(now - 29 * DAY_MS), conversionDateTo: day(now) };
      const inDollars = await performance(t, who, { ...last30, stats: "commission" });
      expect(inDollars.body.meta).toEqual({
        timeZone: "UTC",
        currency: "USD",
        status: ["pending", "approved"],
        unconverted: [{ currency: "JPY", conversions: 1 }],
      });
      const revenue = page.locator('.card[data-stat="commission"] .card-value');
      await expect
        .poll(() => revenue.textContent(), { timeout: WAIT_MS })
        .toBe(money(inDollars.body.data[0].commission, "USD"));
      const warning = page.getByTestId("unconverted");
      expect(await warning.textContent()).toBe(unconvertedText(inDollars.body.meta));
      expect(await warning.getByRole("link", { name: "Settings" }).getAttribute("href")).toBe(
        "/settings#exchange-rates",
      );
      const picker = page.getByLabel("Currency", { exact: true });
      expect(await picker.inputValue()).toBe("");
      expect(await picker.locator("option:checked").textContent()).toBe("Reporting currency (USD)");

      // Another currency: asked of the API, kept in the address, every amount in it.
      const inEurosAsked = page.waitForRequest((r) => isReport(r.url(), "EUR"), { timeout: WAIT_MS });
      await picker.selectOption("EUR");
      await inEurosAsked;
      await page.waitForURL((url) => url.searchParams.get("currency") === "EUR");
      const inEuros = await performance(t, who, { ...last30, stats: "commission", currency: "EUR" });
      expect(inEuros.body.meta.currency).toBe("EUR");
      await expect
        .poll(() => revenue.textContent(), { timeout: WAIT_MS })
        .toBe(money(inEuros.body.data[0].commission, "EUR"));
      await expect.poll(() => warning.textContent(), { timeout: WAIT_MS }).toBe(unconvertedText(inEuros.body.meta));
      // A preset keeps the currency.
      await page.getByRole("link", { name: "Last 7 days" }).click();
      await page.waitForURL((url) => url.searchParams.get("currency") === "EUR" && url.searchParams.has("from"));
      await screenshot(page, "reports-05-overview-in-euros");
      await expectAccessible(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "reports-05-overview-in-euros-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1024, height: 800 });

      // The report: amounts in the answer's currency in rows, totals and chart, the warning by the totals.
      const query = {
        fields: "brand,date",
        stats: "clicks,commission,epc",
        range: "custom",
        from,
        to,
        chart: "commission",
      };
      await page.goto(`${origin}/reports?${new URLSearchParams(query)}`);
      const base = { ...window, stats: query.stats };
      const answer = await performance(t, who, { ...base, fields: query.fields, offset: "0", limit: "100" });
      const totals = await performance(t, who, base);
      const expectTexts = async (rows: Row[], total: Row, currency: string) =>
        expect
          .poll(() => shownTexts(page), { timeout: WAIT_MS })
          .toEqual({
            rows: rows.map((r) => [
              String(r.brand),
              String(r.date),
              new Intl.NumberFormat("en-US").format(Number(r.clicks)),
              money(r.commission, currency, true),
              money(r.epc, currency, true),
            ]),
            totals: [
              "Total",
              "",
              new Intl.NumberFormat("en-US").format(Number(total.clicks)),
              money(total.commission, currency, true),
              money(total.epc, currency, true),
            ],
          });
      await expectTexts(answer.body.data, totals.body.data[0], "USD");
      expect(totals.body.meta.unconverted).toEqual([{ currency: "JPY", conversions: 1 }]);
      const reportWarning = page.locator(".report-results").getByTestId("unconverted");
      expect(await reportWarning.textContent()).toBe(unconvertedText(totals.body.meta));
      expect(await page.locator(".report-window").textContent()).toContain("Amounts in: US Dollar (USD)");
      await page.getByRole("heading", { name: "Commission (USD) per day" }).waitFor({ timeout: WAIT_MS });

      const inPoundsAsked = page.waitForRequest((r) => isReport(r.url(), "GBP"), { timeout: WAIT_MS });
      await page.getByLabel("Currency", { exact: true }).selectOption("GBP");
      await inPoundsAsked;
      await page.waitForURL((url) => url.searchParams.get("currency") === "GBP");
      const inPounds = await performance(t, who, {
        ...base,
        fields: query.fields,
        offset: "0",
        limit: "100",
        currency: "GBP",
      });
      const poundTotals = await performance(t, who, { ...base, currency: "GBP" });
      expect(poundTotals.body.meta.currency).toBe("GBP");
      await expectTexts(inPounds.body.data, poundTotals.body.data[0], "GBP");
      await page.getByRole("heading", { name: "Commission (GBP) per day" }).waitFor({ timeout: WAIT_MS });
      await page
        .getByRole("img", { name: /^Chart of commission per day/ })
        .locator("canvas")
        .waitFor();
      expect(await reportWarning.textContent()).toBe(unconvertedText(poundTotals.body.meta));
      await screenshot(page, "reports-06-in-pounds");
      await expectAccessible(page);

      // The address is the view: a reload shows the same report in pounds.
      await page.reload();
      await expectTexts(inPounds.body.data, poundTotals.body.data[0], "GBP");
      expect(await page.getByLabel("Currency", { exact: true }).inputValue()).toBe("GBP");

      // At a phone's width nothing runs off the page: the table scrolls in its own frame.
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "reports-07-in-pounds-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

      // A code the API does not know: its message beside the picker, as a sentence with the field's label.
      await page.setViewportSize({ width: 1024, height: 800 });
      await page.goto(`${origin}/reports?currency=XYZ`);
      const refused = await performance(t, who, { currency: "XYZ" });
      expect(refused.status).toBe(400);
      const currencyField = page.getByLabel("Currency", { exact: true });
      await expect.poll(() => currencyField.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const described = String(await currencyField.getAttribute("aria-describedby")).split(" ");
      expect(await page.locator(`[id="${described.at(-1)}"]`).textContent()).toBe(
        `Currency ${refused.body.data.errors[0].message}.`,
      );
      await screenshot(page, "reports-08-unknown-currency");
      await expectAccessible(page);
      dropRefusals(log, 400, "/api/v1/reports/");
      expectClean(log);
    } finally {
      await context.close();
    }
  });
  it("reads the period in the zone picked beside it, kept in the address, by local hour, and names a zone that is none", {
    timeout: 180_000,
  }, async () => {
    // The browser's clock is in Tokyo; the account's zone is UTC (unless set).
    const { context, page, log } = await openDashboardPage(browser, origin, {
      expectedStatuses: [400],
      timezoneId: "Asia/Tokyo",
    });
    const asked = (zone: string, fields: string) =>
      page.waitForRequest(
        (r) => {
          const u = new URL(r.url());
          return (
            u.pathname === "/api/v1/reports/events/performance" &&
            u.searchParams.get("timeZone") === zone &&
            u.searchParams.get("fields") === fields
          );
        },
        { timeout: WAIT_MS },
      );
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page
        .getByRole("img", { name: /Chart of daily/ })
        .locator("canvas")
        .waitFor({ timeout: WAIT_MS });

      // Unpicked, the account's zone: the presets are its days, and every request names it.
      const inUtc = asked("UTC", "hour");
      await page.goto(
        `${origin}/reports?${new URLSearchParams({ fields: "hour", stats: "clicks", range: "yesterday" })}`,
      );
      const utcYesterday = shiftDay(localDay("UTC"), -1);
      const utcQuery = new URL((await inUtc).url()).searchParams;
      expect(utcQuery.get("conversionDateFrom")).toBe(utcYesterday);
      expect(utcQuery.get("conversionDateTo")).toBe(utcYesterday);
      const picker = page.getByLabel("Time zone", { exact: true });
      await expect.poll(() => picker.inputValue(), { timeout: WAIT_MS }).toBe("UTC");

      // Offered: the account's zone, this browser's, UTC, then every zone the browser lists.
      const list = page.locator(`[id="${await picker.getAttribute("list")}"] option`);
      expect(await list.count()).toBeGreaterThan(300);
      expect(await list.first().getAttribute("label")).toBe("The account's time zone");
      expect(await list.nth(1).getAttribute("value")).toBe("Asia/Tokyo");
      expect(await list.nth(1).getAttribute("label")).toBe("This browser's time zone");

      // Typed in any case: the days are New York's, asked as dates with the zone, kept in the address.
      const inNewYork = asked("America/New_York", "hour");
      await picker.fill("america/new_york");
      await picker.press("Enter");
      const nyQuery = new URL((await inNewYork).url()).searchParams;
      await page.waitForURL((url) => url.searchParams.get("tz") === "America/New_York");
      const nyYesterday = shiftDay(localDay("America/New_York"), -1);
      expect(nyQuery.get("conversionDateFrom")).toBe(nyYesterday);
      expect(nyQuery.get("conversionDateTo")).toBe(nyYesterday);
      expect(await picker.inputValue()).toBe("America/New_York");

      // The rows are the API's local hours for the same request, each with its offset.
      const hourly = await performance(t, who, {
        fields: "hour",
        stats: "clicks",
        conversionDateFrom: nyYesterday,
        conversionDateTo: nyYesterday,
        timeZone: "America/New_York",
        offset: "0",
        limit: "100",
      });
      expect(hourly.body.meta.timeZone).toBe("America/New_York");
      const hours = hourly.body.data as Row[];
      expect(hours.length).toBeGreaterThan(0);
      for (const row of hours) expect(String(row.hour)).toMatch(new RegExp(`^${nyYesterday}T\\d{2}:00-0[45]:00$`));
      await expect
        .poll(() => shownTable(page), { timeout: WAIT_MS })
        .toMatchObject({ rows: asTable(hours, ["hour"], ["clicks"]) });
      const firstHour = String(hours[0]?.hour);
      expect(await page.locator(".report-results tbody tr").first().locator("td").first().textContent()).toBe(
        `${firstHour.slice(0, 10)} ${firstHour.slice(11, 16)} (${firstHour.slice(16)})`,
      );
      // The chart: a bar per hour; the page says which zone the figures are in (the answer's).
      const chart = page.getByRole("img", { name: /^Chart of clicks per hour/ });
      await chart.locator("canvas").waitFor({ timeout: WAIT_MS });
      expect(await chart.getAttribute("aria-label")).toContain(`${hours.length} bars`);
      const windowText = page.locator(".report-window");
      await expect
        .poll(() => windowText.textContent(), { timeout: WAIT_MS })
        .toContain(`${nyYesterday} (America/New_York)`);
      expect(await windowText.textContent()).toContain("Time zone: America/New_York");
      await page.setViewportSize({ width: 1280, height: 900 });
      await screenshot(page, "reports-09-new-york-by-hour");
      await expectAccessible(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "reports-10-new-york-by-hour-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      // The narrowest phone the dashboard is for: nothing runs off the page there either.
      await page.setViewportSize({ width: 360, height: 780 });
      await screenshot(page, "reports-10-new-york-by-hour-360px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      await page.setViewportSize({ width: 1024, height: 800 });

      // The address is the view; a preset added to the list is local too.
      await page.reload();
      await expect.poll(() => picker.inputValue(), { timeout: WAIT_MS }).toBe("America/New_York");
      // The request of last month's window: the reload's own (yesterday's) may still be on its way.
      const lastMonth = page.waitForRequest(
        (r) => {
          const u = new URL(r.url());
          return (
            u.pathname === "/api/v1/reports/events/performance" &&
            u.searchParams.get("timeZone") === "America/New_York" &&
            u.searchParams.get("conversionDateFrom")?.endsWith("-01") === true &&
            u.searchParams.get("conversionDateFrom") !== u.searchParams.get("conversionDateTo")
          );
        },
        { timeout: WAIT_MS },
      );
      await page.getByLabel("Period").selectOption("lastMonth");
      const monthQuery = new URL((await lastMonth).url()).searchParams;
      const nyMonthStart = `${localDay("America/New_York").slice(0, 7)}-01`;
      expect(monthQuery.get("conversionDateTo")).toBe(shiftDay(nyMonthStart, -1));
      expect(monthQuery.get("conversionDateFrom")).toBe(`${shiftDay(nyMonthStart, -1).slice(0, 7)}-01`);

      // This browser's zone, picked from the list: applied at once.
      const inTokyo = asked("Asia/Tokyo", "hour");
      await pickFromList(picker, "Asia/Tokyo");
      await inTokyo;
      await page.waitForURL((url) => url.searchParams.get("tz") === "Asia/Tokyo");

      // The account's zone again: the address drops the parameter and follows the setting.
      const backToUtc = asked("UTC", "hour");
      await picker.fill("UTC");
      await picker.press("Enter");
      await backToUtc;
      await page.waitForURL((url) => !url.searchParams.has("tz") && url.searchParams.get("range") === "lastMonth");

      // A zone that is none: the API's message beside the picker, as a sentence with the field's label.
      await page.goto(`${origin}/reports?tz=Mars/Base`);
      const refused = await performance(t, who, { timeZone: "Mars/Base" });
      expect(refused.status).toBe(400);
      expect(refused.body.data.errors[0].path).toBe("timeZone");
      await expect.poll(() => picker.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const described = String(await picker.getAttribute("aria-describedby")).split(" ");
      expect(await page.locator(`[id="${described.at(-1)}"]`).textContent()).toBe(
        `Time zone ${refused.body.data.errors[0].message}.`,
      );
      await screenshot(page, "reports-11-unknown-zone");
      await expectAccessible(page);
      dropRefusals(log, 400, "/api/v1/reports/");
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
