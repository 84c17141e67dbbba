import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tenancy, TestApp } from "./helpers/app.js";
import { clickThrough, seedCatalog } from "./helpers/catalog.js";
import { hasChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  startDashboard,
  stopDashboard,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// The dashboard on a phone, by touch: a 390 px touch screen signs in with taps, opens every page
// from the menu (which closes on the page it leads to), and no page runs off the screen.

/** Every entry of the main navigation and the address it leads to. */
const PAGES: [string, string][] = [
  ["Overview", "/"],
  ["Reports", "/reports"],
  ["Accounts and links", "/accounts"],
  ["Conversions", "/conversions"],
  ["Clicks", "/clicks"],
  ["Catalog", "/catalog"],
  ["Postback log", "/postback-log"],
  ["Outgoing webhooks", "/webhooks"],
  ["Operational webhooks", "/notifications"],
  ["API keys", "/api-keys"],
  ["MCP", "/mcp-setup"],
  ["Usage", "/usage"],
  ["Issues", "/issues"],
  ["Settings", "/settings"],
];

/** Nothing is wider than the screen: no sideways scrolling of the page. */
const pageWidth = (page: Page) => page.evaluate(() => document.documentElement.scrollWidth);

describe.skipIf(!hasChromium)("dashboard on a phone", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    ({ t, who, browser, origin } = await startDashboard(async (app, tenancy) => {
      const cat = await seedCatalog(app, tenancy);
      for (let i = 0; i < 3; i += 1) await clickThrough(app, cat, `?pa=sub-${i}`);
      await app.ctx.tracking.clicks.flush();
    }));
  }, 120_000);

  afterAll(() => stopDashboard({ t, browser }));

  it("signs in and reaches every page through the menu by touch", { timeout: 300_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { phone: true });
    try {
      await page.goto(`${origin}/sign-in`);
      await page.getByLabel("Email").tap();
      await page.getByLabel("Email").fill(who.email);
      await page.getByLabel("Password").tap();
      await page.getByLabel("Password").fill(who.password);
      await page.getByRole("button", { name: "Sign in" }).tap();
      await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor({ timeout: WAIT_MS });
      const menu = page.getByRole("button", { name: "Menu" });
      const nav = page.getByRole("navigation", { name: "Main" });
      // Closed: the page starts at the top of the screen, not under fourteen links.
      expect(await menu.getAttribute("aria-expanded")).toBe("false");
      expect(await nav.isVisible()).toBe(false);
      for (const [index, [label, path]] of PAGES.entries()) {
        await menu.tap();
        expect(await menu.getAttribute("aria-expanded")).toBe("true");
        if (index === 0) await screenshot(page, "phone-00-menu-open");
        await nav.getByRole("link", { name: label, exact: true }).tap();
        await page.waitForURL((url) => url.pathname === path, { timeout: WAIT_MS });
        await page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: WAIT_MS });
        await page.locator(".state-loading").first().waitFor({ state: "detached", timeout: WAIT_MS });
        // The menu closes on the page it led to.
        expect(await menu.getAttribute("aria-expanded")).toBe("false");
        expect(await pageWidth(page), `${path} is wider than the phone`).toBeLessThanOrEqual(390);
        await screenshot(
          page,
          `phone-${String(index + 1).padStart(2, "0")}${path === "/" ? "-overview" : path.replaceAll("/", "-")}`,
        );
      }
      await expectAccessible(page);

      // A form by touch: the reports' breakdowns and the way back to totals.
      await menu.tap();
      await nav.getByRole("link", { name: "Reports", exact: true }).tap();
      await page.getByRole("checkbox", { name: "Sub-id A (pa)", exact: true }).tap();
      await page.waitForURL((url) => url.searchParams.get("fields") === "parameterA", { timeout: WAIT_MS });
      await page.locator(".report-results tbody td", { hasText: "sub-2" }).waitFor({ timeout: WAIT_MS });
      expect(await pageWidth(page)).toBeLessThanOrEqual(390);
      await screenshot(page, "phone-15-report-by-sub-id");
      // The narrowest phone the dashboard is for: the top bar and the page still fit.
      await page.setViewportSize({ width: 360, height: 780 });
      await menu.tap();
      await nav.getByRole("link", { name: "Overview", exact: true }).tap();
      await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(await pageWidth(page)).toBeLessThanOrEqual(360);
      const bar = await page.locator(".topbar").boundingBox();
      expect(bar?.height).toBeLessThanOrEqual(56);
      await screenshot(page, "phone-16-overview-360px");
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
