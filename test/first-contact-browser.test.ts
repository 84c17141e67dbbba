import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { CHROMIUM, hasChromium, launchChromium } from "./helpers/chromium.js";

// First contact with the API explorer (/api/swagger) and the reference page (/api/docs) in a real
// browser: they say plainly what to paste for an API key, and the reference page shows none of
// Scalar's hosted-product buttons.
if (!hasChromium) console.warn(`first-contact-browser tests skipped: they need Chromium at ${CHROMIUM}.`);

const RENDER_TIMEOUT_MS = 20_000;
// What the ApiKey scheme's description tells to paste (src/platform/openapi.ts).
const PASTE_HINT = "ApiKey YOUR_KEY";

async function open(browser: Browser, origin: string, path: string): Promise<Page> {
  const page = await browser.newPage();
  // No internet here, and the pages must not need it.
  await page.route("**/*", (route) =>
    route.request().url().startsWith(origin) ? route.continue() : route.abort("blockedbyclient"),
  );
  const res = await page.goto(`${origin}${path}`, { waitUntil: "domcontentloaded" });
  expect(res?.ok()).toBe(true);
  return page;
}

// textContent: a placeholder taken for an HTML tag is gone from it as from the screen.
const pageText = (page: Page) => page.evaluate(() => document.body.textContent ?? "");

describe.skipIf(!hasChromium)("the API explorer and reference page at first contact", () => {
  let t: TestApp;
  let browser: Browser;
  let origin: string;
  beforeAll(async () => {
    t = await startTestApp();
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
  });
  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("Swagger UI's Authorize dialog says to paste 'ApiKey YOUR_KEY', nothing swallowed", {
    timeout: 60_000,
  }, async () => {
    const page = await open(browser, origin, "/api/swagger");
    try {
      await page.waitForSelector(".opblock", { timeout: RENDER_TIMEOUT_MS });
      const intro = (await page.locator(".information-container").textContent()) ?? "";
      expect(intro).toContain("Authorization: ApiKey YOUR_KEY");
      await page.locator("button.authorize").first().click();
      const dialog = page.locator(".auth-container").first();
      await dialog.waitFor({ timeout: RENDER_TIMEOUT_MS });
      const text = (await page.locator(".modal-ux").textContent()) ?? "";
      expect(text).toContain(PASTE_HINT);
      expect(text).toContain("A key pasted alone is refused (401)");
      // The old wording lost its placeholder: "The header value is 'ApiKey ' (scheme ...".
      expect(text).not.toMatch(/ApiKey '\s/);
    } finally {
      await page.close();
    }
  });

  it("the Scalar reference says what to paste and has no AI, MCP, share or deploy buttons", {
    timeout: 60_000,
  }, async () => {
    const page = await open(browser, origin, "/api/docs");
    try {
      await page.getByText("Service health").first().waitFor({ timeout: RENDER_TIMEOUT_MS });
      // Lazy parts (sidebar footer, toolbar) settle after the first operations render.
      await page.waitForTimeout(1500);
      const text = await pageText(page);
      expect(text).toContain("Authorization: ApiKey YOUR_KEY");
      // The ApiKey scheme's own description, in the authentication box.
      expect(text).toContain(PASTE_HINT);
      expect(text).toContain("A key pasted alone is refused (401)");
      expect(text).not.toMatch(/ApiKey '\s/);
      const controls = await page.$$eval("button, a, [role=button]", (els) =>
        els
          .filter((el) => (el as HTMLElement).offsetParent !== null)
          .map((el) => `${el.textContent ?? ""} ${el.getAttribute("aria-label") ?? ""}`.trim()),
      );
      for (const hosted of [
        "Ask AI",
        "Generate MCP",
        "VS Code",
        "Cursor",
        "Developer Tools",
        "Configure",
        "Share",
        "Deploy",
      ]) {
        expect(
          controls.filter((c) => c.includes(hosted)),
          hosted,
        ).toEqual([]);
      }
      // Trying a request is the point of the page: that button stays.
      expect(controls.some((c) => c.includes("Test Request"))).toBe(true);
    } finally {
      await page.close();
    }
  });
});
