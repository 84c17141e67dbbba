import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  signIn,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

/**
 * A sign-in lasts across the tabs of one browser (an open tab hands its session to a new one,
 * web/src/session.ts), sign-out in one tab signs out all, and a form's refusals read as sentences.
 */
describe.skipIf(!hasChromium)("dashboard session and messages", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 10_000 } } });
    who = await seedTenancy(t);
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
  }, 60_000);
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("keeps a sign-in in a new tab and signs every tab out at once", { timeout: 60_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      // A link opened in a new tab (its own, empty sessionStorage) is signed in.
      const other = await context.newPage();
      await other.goto(`${origin}/settings`);
      await other.getByRole("heading", { name: "Settings", level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(new URL(other.url()).pathname).toBe("/settings");
      expect(await other.evaluate(() => localStorage.length)).toBe(0);
      // Sign-out in the first tab takes the second to the sign-in page, saying why.
      await page.getByRole("button", { name: "Sign out" }).click();
      await other.getByText("You have signed out.").waitFor({ timeout: WAIT_MS });
      expect(new URL(other.url()).pathname).toBe("/sign-in");
      expect(await other.evaluate(() => sessionStorage.getItem("tp.session"))).toBeNull();
      // No tab holds a session now: a new one asks for a sign-in.
      const third = await context.newPage();
      await third.goto(`${origin}/`);
      await third.getByRole("heading", { name: "Sign in" }).waitFor({ timeout: WAIT_MS });
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  for (const width of [1440, 390]) {
    it(`shows every refused field of a form as a sentence with its label (${width} px)`, {
      timeout: 60_000,
    }, async () => {
      const { context, page } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
      try {
        await page.setViewportSize({ width, height: 800 });
        await page.goto(`${origin}/sign-in`);
        await page.getByLabel("Email").fill("not-an-email");
        await page.getByRole("button", { name: "Sign in" }).click();
        await page.getByText("Email must be an email address.").waitFor({ timeout: WAIT_MS });
        await page.getByText("Password must not be empty.").waitFor({ timeout: WAIT_MS });
        await screenshot(page, `session-two-refusals-${width}`);
        await expectAccessible(page);
      } finally {
        await context.close();
      }
    });
  }
});
