import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { clickThrough, seedCatalog } from "./helpers/catalog.js";
import { hasChromium } from "./helpers/chromium.js";
import {
  type DashboardRun,
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  signIn,
  startDashboard,
  stopDashboard,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// The click log and the postback log in the dashboard against the real service: a phone's click
// with its facts and a crawler's flagged as a bot, one click's page with its conversion and a
// link to the postbacks that named it, a refused postback with its reason, the filters in the
// address; every page at 1440 and 390 px, axe clean, no console error.

const PHONE =
  "Mozilla/5.0 (Linux; Android 14; Pixel 8) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0 Mobile Safari/537.36";
const CRAWLER = "Mozilla/5.0 (compatible; bingbot/2.0; +http://www.bing.com/bingbot.htm)";

async function shoot(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1440, height: 900 });
  await screenshot(page, `${name}-1440`);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, `${name}-390`);
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at 390 px`).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1024, height: 800 });
}

describe.skipIf(!hasChromium)("dashboard: click and postback logs", () => {
  let run: DashboardRun;
  let phoneClick = "";

  beforeAll(async () => {
    run = await startDashboard(async (t, who) => {
      const cat = await seedCatalog(t, who);
      const go = async (userAgent: string, query: string) => {
        const res = await t.call({
          method: "GET",
          url: `/go/${cat.linkId}/${cat.trafficSourceId}${query}`,
          headers: { "user-agent": userAgent },
        });
        return new URL(String(res.headers.location)).searchParams.get("cid") ?? "";
      };
      phoneClick = await go(PHONE, "?pa=spring-sale");
      await go(CRAWLER, "");
      await clickThrough(t, cat);
      await t.ctx.tracking.clicks.flush();
      await t.call({
        method: "GET",
        url: `/postback/${who.postbackKey}?clickId=${phoneClick}&type=signup&externalId=u-1`,
      });
      await t.call({
        method: "GET",
        url: `/postback/${who.postbackKey}?clickId=${phoneClick}&type=Deposit&value=ten&externalId=d-1`,
      });
    });
  });
  afterAll(async () => stopDashboard(run));

  it("lists clicks with their facts, a bot flagged, and narrows to bots", { timeout: 120_000 }, async () => {
    const { context, page, log } = await openDashboardPage(run.browser, run.origin);
    await page.goto(run.origin);
    await signIn(page, run.who);
    await page.getByRole("link", { name: "Clicks", exact: true }).click();
    const table = page.getByRole("table", { name: "Clicks, newest first" });
    await table.waitFor({ timeout: WAIT_MS });
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(3);
    const phoneRow = table.locator("tbody tr", { hasText: phoneClick });
    await expect.poll(() => phoneRow.textContent()).toMatch(/mobile.*Android.*Chrome.*Person.*spring-sale/);
    expect(await table.locator("tbody tr", { hasText: "Bot user agent" }).count()).toBe(1);
    await expectAccessible(page);
    await shoot(page, "logs-clicks");

    await page.getByLabel("Made by").selectOption("yes");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => new URL(page.url()).searchParams.get("bot")).toBe("yes");
    await expect.poll(() => table.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(1);
    expectClean(log);
    await context.close();
  });

  it("shows one click with its conversion and links to the postbacks that named it", { timeout: 120_000 }, async () => {
    const { context, page, log } = await openDashboardPage(run.browser, run.origin);
    await page.goto(run.origin);
    await signIn(page, run.who);
    await page.goto(`${run.origin}/clicks/${phoneClick}`);
    await page.getByRole("heading", { name: "Facts" }).waitFor({ timeout: WAIT_MS });
    const text = (await page.locator("main").textContent()) ?? "";
    expect(text).toContain("Android");
    expect(text).toContain("spring-sale");
    const conversions = page.getByRole("table", { name: "Conversions of this click" });
    await expect.poll(() => conversions.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(1);
    await expectAccessible(page);
    await shoot(page, "logs-click");

    await page.getByRole("link", { name: "Postbacks that named this click" }).click();
    const lines = page.getByRole("table", { name: "Incoming conversions, newest first" });
    await expect.poll(() => lines.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(2);
    const refused = lines.locator("tbody tr", { hasText: "Refused" });
    await expect.poll(() => refused.textContent()).toContain("value");
    await refused.getByText("fields").click();
    await expect.poll(() => refused.textContent()).toContain("ten");
    await expectAccessible(page);
    await shoot(page, "logs-postbacks");

    await page.getByLabel("Outcome").selectOption("recorded");
    await page.getByRole("button", { name: "Apply" }).click();
    await expect.poll(() => lines.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(1);
    expectClean(log);
    await context.close();
  });
});
