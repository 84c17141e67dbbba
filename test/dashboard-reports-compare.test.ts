import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import type { Tenancy, TestApp } from "./helpers/app.js";
import { CHROMIUM, hasChromium } from "./helpers/chromium.js";
import {
  dropRefusals,
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  signIn,
  startDashboard,
  stopDashboard,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";
import { performanceReport } from "./helpers/reports.js";

// The reports page's drill-down, presets and saved reports, end to end: the real service on
// loopback, its build, Chromium, at a desktop width and a phone's.
if (!hasChromium) {
  console.warn(`dashboard reports drill tests skipped: they need Chromium at ${CHROMIUM} (Debian package 'chromium').`);
}

const search = (page: Page) => new URL(page.url()).searchParams;

describe.skipIf(!hasChromium)("dashboard reports: drill-down, presets, saved reports", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;
  beforeAll(async () => {
    ({ t, who, browser, origin } = await startDashboard(async (app, tenant) => {
      await generateTraffic(app.ctx.db, tenant.tenantId, { days: 10, clicks: 300, now: app.clock.now() });
    }));
  }, 180_000);
  afterAll(() => stopDashboard({ t, browser }));

  for (const [label, width] of [
    ["desktop", 1440],
    ["phone", 390],
  ] as const) {
    it(`drills into a brand, goes back, uses a preset, saves and reopens the report (${label})`, {
      timeout: 180_000,
    }, async () => {
      const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [409] });
      try {
        await page.setViewportSize({ width, height: 900 });
        await page.goto(`${origin}/sign-in`);
        await signIn(page, who);
        await page.goto(`${origin}/reports?fields=brand,trafficSource&stats=clicks,signups&range=30d`);
        await page.getByRole("heading", { name: "Reports", level: 1 }).waitFor({ timeout: WAIT_MS });
        const table = page.locator(".report-results table");
        await table.locator("tbody tr").first().waitFor({ timeout: WAIT_MS });

        // Drill-down: a brand's value narrows the report to it, on the next breakdown.
        const first = table.locator("tbody tr").first().getByRole("button");
        await first.click();
        await expect.poll(() => search(page).get("brandId"), { timeout: WAIT_MS }).toMatch(/^\d+$/);
        expect(search(page).get("fields")).toBe("trafficSource");
        await page.getByRole("columnheader", { name: /Traffic source/ }).waitFor({ timeout: WAIT_MS });
        await screenshot(page, `reports-drilled-${label}`);
        await page.getByRole("button", { name: "Back to the wider report" }).click();
        await expect.poll(() => search(page).get("fields"), { timeout: WAIT_MS }).toBe("brand,trafficSource");
        expect(search(page).get("brandId")).toBeNull();

        // Presets: last month, by its label.
        await page.getByLabel("Period", { exact: false }).first().selectOption({ label: "Last month" });
        await expect.poll(() => search(page).get("range"), { timeout: WAIT_MS }).toBe("lastMonth");

        // Saved reports: save under a name, go elsewhere, reopen it.
        const name = `Brands last month ${label}`;
        const saved = page.getByRole("region", { name: "Saved reports" });
        await saved.getByLabel("Name").fill(name);
        await saved.getByRole("button", { name: "Save this report" }).click();
        await saved.getByRole("button", { name: `Open ${name}`, exact: true }).waitFor({ timeout: WAIT_MS });
        await page.goto(`${origin}/reports`);
        await saved.getByRole("button", { name: `Open ${name}`, exact: true }).click();
        await expect.poll(() => search(page).get("range"), { timeout: WAIT_MS }).toBe("lastMonth");
        expect(search(page).get("fields")).toBe("brand,trafficSource");

        // A taken name is refused beside the field.
        await saved.getByLabel("Name").fill(name.toUpperCase());
        await saved.getByRole("button", { name: "Save this report" }).click();
        await saved.getByRole("alert").first().waitFor({ timeout: WAIT_MS });
        await screenshot(page, `reports-saved-${label}`);

        // Rename, then delete.
        await saved.getByRole("button", { name: `Rename ${name}`, exact: true }).click();
        await saved.getByLabel("New name").fill(`${name} (renamed)`);
        await saved.getByRole("button", { name: "Rename", exact: true }).click();
        await saved.getByRole("button", { name: `Open ${name} (renamed)`, exact: true }).waitFor({ timeout: WAIT_MS });
        await saved
          .getByRole("button", { name: `Delete ${name} (renamed)` })
          .first()
          .click();
        await page
          .getByRole("dialog")
          .getByRole("button", { name: `Delete ${name} (renamed)` })
          .click();
        await expect
          .poll(() => saved.getByRole("button", { name: `Open ${name} (renamed)`, exact: true }).count())
          .toBe(0);

        // The page fits the width: only the table's own frame scrolls sideways.
        const overflow = await page.evaluate(() => document.documentElement.scrollWidth - window.innerWidth);
        expect(overflow).toBeLessThanOrEqual(0);
        await expectAccessible(page);
        dropRefusals(log, 409, "/api/v1/saved-reports");
        expectClean(log);
      } finally {
        await context.close();
      }
    });
  }

  it("compares every figure with the previous period of the same length, in the table and the CSV", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);
      const now = t.clock.now().getTime();
      const [from, to] = [day(now - 4 * 86_400_000), day(now)];
      const [beforeFrom, beforeTo] = [day(now - 9 * 86_400_000), day(now - 5 * 86_400_000)];
      await page.goto(`${origin}/reports?fields=trafficSource&stats=clicks&range=custom&from=${from}&to=${to}&tz=UTC`);
      const table = page.locator(".report-results table");
      await table.locator("tbody tr").first().waitFor({ timeout: WAIT_MS });
      await page.getByLabel("Show changes against the same number of days before").check();
      await expect.poll(() => search(page).get("compare"), { timeout: WAIT_MS }).toBe("previous");
      await expect
        .poll(() => page.getByTestId("comparison-window").textContent(), { timeout: WAIT_MS })
        .toContain(`${beforeFrom} to ${beforeTo}`);
      // Each row's previous figure is the API's for the same source over the previous five days.
      const before = await performanceReport(t, who, {
        fields: "trafficSource",
        stats: "clicks",
        conversionDateFrom: beforeFrom,
        conversionDateTo: beforeTo,
        timeZone: "UTC",
        limit: 999,
      });
      const expected = new Map(
        (before.data as { trafficSource: string; clicks: number }[]).map((r) => [r.trafficSource, r.clicks]),
      );
      const firstRow = table.locator("tbody tr").first();
      await firstRow.locator(".report-change").waitFor({ timeout: WAIT_MS });
      const source = String(await firstRow.locator("td").first().textContent());
      const previous = await firstRow.locator(".report-change").getAttribute("data-previous");
      expect(Number(previous)).toBe(expected.get(source) ?? 0);
      expect(await table.locator("tfoot .report-change").count()).toBe(1);
      await screenshot(page, "reports-compare-1440");
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "reports-compare-390");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1440, height: 900 });
      await expectAccessible(page);
      // The CSV has each stat's previous figure beside it.
      const download = page.waitForEvent("download");
      await page.getByRole("button", { name: "Download CSV" }).click();
      const file = await (await download).path();
      const { readFile } = await import("node:fs/promises");
      const csv = await readFile(file, "utf8");
      expect(csv.split("\n")[0]).toContain("clicks,clicks_previous");

      // A row's clicks: the click log narrowed to its traffic source over the report's days.
      await firstRow.getByRole("link", { name: "Clicks" }).click();
      await page.waitForURL((url) => url.pathname === "/clicks", { timeout: WAIT_MS });
      expect(search(page).get("source")).toMatch(/^\d+$/);
      expect(search(page).get("from")).toBe(from);
      expect(search(page).get("to")).toBe(to);
      await page.getByRole("table", { name: "Clicks, newest first" }).waitFor({ timeout: WAIT_MS });
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("stacks the chart by the breakdown beside the date, ten values and the rest, and narrows to one", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.setViewportSize({ width: 1440, height: 900 });
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.goto(`${origin}/reports?fields=date,trafficSource&stats=clicks&range=30d`);
      const chart = page.getByRole("img", { name: /^Chart of clicks per day/ });
      await chart.locator("canvas").waitFor({ timeout: WAIT_MS });
      await expect.poll(() => chart.getAttribute("aria-label"), { timeout: WAIT_MS }).toMatch(/stacked by \d+ series/);
      // Each traffic source with an id can be narrowed to, from the chart (a bar) or the list under it.
      const narrowTo = page.getByRole("list", { name: "Narrow the report to one traffic source" });
      const choices = narrowTo.getByRole("button");
      expect(await choices.count()).toBeGreaterThan(0);
      expect(await choices.count()).toBeLessThanOrEqual(10);
      await screenshot(page, "reports-chart-stacked-1440");
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "reports-chart-stacked-390");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1440, height: 900 });
      await expectAccessible(page);
      const name = String(await choices.first().textContent());
      await choices.first().click();
      await expect.poll(() => search(page).get("trafficSourceId"), { timeout: WAIT_MS }).toMatch(/^\d+$/);
      expect(search(page).get("fields")).toBe("date");
      await expect.poll(() => chart.getAttribute("aria-label"), { timeout: WAIT_MS }).not.toContain("stacked");
      expect(name.length).toBeGreaterThan(0);
      await page.getByRole("button", { name: "Back to the wider report" }).click();
      await expect.poll(() => search(page).get("fields"), { timeout: WAIT_MS }).toBe("date,trafficSource");
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
