import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startTestApp, type TestApp } from "./helpers/app.js";
import { CHROMIUM, hasChromium, launchChromium } from "./helpers/chromium.js";

// The documentation pages in a real browser: Swagger UI at /api/swagger and the Scalar reference at
// /api/docs must render our operations from assets this server serves (no CDN, no internet).
if (!hasChromium) {
  console.warn(
    `docs-browser tests skipped: they need Chromium at ${CHROMIUM} (Debian package 'chromium'); CI installs it.`,
  );
}

// Summaries of GET /api/health and GET /api/v1/me (src/features/health/routes.ts, src/features/auth/routes.ts).
const HEALTH_SUMMARY = "Service health: api, database, queue, search.";
const ME_SUMMARY = "The signed-in person; refuses API keys (403)";
const RENDER_TIMEOUT_MS = 20_000;

interface PageLog {
  /** Requests to our origin that failed or answered 4xx/5xx. */
  ownFailures: string[];
  /** Requests that left our origin (aborted: there is no internet, and the pages must not need it). */
  external: { url: string; type: string }[];
  /** Console errors, each with the URL it came from. */
  consoleErrors: { text: string; url: string }[];
  pageErrors: string[];
}

/** What a page reports of the Content-Security-Policy it refused something under. */
interface Violation {
  directive: string;
  blocked: string;
  sample: string;
}

/** Every CSP violation the page reported (recorded from its first script on). */
async function violationsOf(page: Page): Promise<Violation[]> {
  return page.evaluate(() => (window as unknown as { __violations: Violation[] }).__violations);
}

/** Opens a page that records every failure and aborts every request leaving our origin. */
async function openPage(browser: Browser, origin: string): Promise<{ page: Page; log: PageLog }> {
  const context = await browser.newContext();
  await context.addInitScript(() => {
    const violations: Violation[] = [];
    (window as unknown as { __violations: Violation[] }).__violations = violations;
    document.addEventListener("securitypolicyviolation", (event) => {
      violations.push({ directive: event.effectiveDirective, blocked: event.blockedURI, sample: event.sample });
    });
  });
  const page = await context.newPage();
  const log: PageLog = { ownFailures: [], external: [], consoleErrors: [], pageErrors: [] };
  const isOwn = (url: string) => url.startsWith(`${origin}/`) || url === origin;
  await page.route("**/*", async (route) => {
    const request = route.request();
    const url = request.url();
    if (isOwn(url) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    log.external.push({ url, type: request.resourceType() });
    return route.abort("blockedbyclient");
  });
  page.on("requestfailed", (request) => {
    if (isOwn(request.url())) log.ownFailures.push(`${request.url()}: ${request.failure()?.errorText ?? "failed"}`);
  });
  page.on("response", (response) => {
    if (isOwn(response.url()) && response.status() >= 400) {
      log.ownFailures.push(`${response.url()}: HTTP ${response.status()}`);
    }
  });
  page.on("console", (message) => {
    if (message.type() === "error") log.consoleErrors.push({ text: message.text(), url: message.location().url });
  });
  page.on("pageerror", (error) => log.pageErrors.push(error.message));
  return { page, log };
}

/** The page's answer carries the documentation pages' headers (page-headers.ts). */
function expectDocsHeaders(headers: Record<string, string>): void {
  expect(headers["content-security-policy"]).toMatch(/frame-ancestors 'none'/);
  const scripts = /script-src ([^;]*)/.exec(headers["content-security-policy"] ?? "")?.[1] ?? "";
  expect(scripts).toMatch(/^'self'/);
  expect(scripts).not.toMatch(/unsafe/);
  expect(headers["x-frame-options"]).toBe("DENY");
  expect(headers["x-content-type-options"]).toBe("nosniff");
  expect(headers["referrer-policy"]).toBe("no-referrer");
}

function expectSelfContained(log: PageLog): void {
  expect(log.ownFailures, "requests to our own server that failed").toEqual([]);
  // Scripts, styles, fonts, the document itself: nothing may come from elsewhere (a CDN, a font host).
  expect(log.external, "requests to another origin").toEqual([]);
  expect(log.pageErrors, "uncaught errors in the page").toEqual([]);
  // The browser probes /favicon.ico on its own; a page without one there is not broken.
  const errors = log.consoleErrors.filter((e) => !e.url.endsWith("/favicon.ico"));
  expect(errors, "console errors").toEqual([]);
}

describe.skipIf(!hasChromium)("documentation pages in a browser", () => {
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

  it("renders our operations in Swagger UI at /api/swagger", { timeout: 60_000 }, async () => {
    const { page, log } = await openPage(browser, origin);
    try {
      const res = await page.goto(`${origin}/api/swagger`, { waitUntil: "domcontentloaded" });
      expect(res?.ok()).toBe(true);
      expectDocsHeaders((await res?.allHeaders()) ?? {});
      // Swagger UI puts zero-width spaces before each '/' of a path; compare without them.
      await page.waitForFunction(
        (path) =>
          Array.from(document.querySelectorAll(".opblock")).some((el) =>
            (el.textContent ?? "").replace(/\u200b/g, "").includes(path),
          ),
        "/api/v1/me",
        { timeout: RENDER_TIMEOUT_MS },
      );
      const paths = await page.$$eval(".opblock .opblock-summary-path", (els) =>
        els.map((el) => (el.textContent ?? "").replace(/\u200b/g, "")),
      );
      expect(paths).toContain("/api/v1/auth");
      expect(paths.filter((p) => p.startsWith("/api/admin"))).toEqual([]);
      // Opening an operation renders its parameters and the "Try it out" button under the policy.
      await page.locator(".opblock-summary").first().click();
      await page.locator(".try-out__btn").first().waitFor({ timeout: RENDER_TIMEOUT_MS });
      expect(await violationsOf(page), "CSP violations").toEqual([]);
      expectSelfContained(log);
    } finally {
      await page.context().close();
    }
  });

  it("renders our operations in the Scalar reference at /api/docs", { timeout: 60_000 }, async () => {
    const { page, log } = await openPage(browser, origin);
    try {
      const res = await page.goto(`${origin}/api/docs`, { waitUntil: "domcontentloaded" });
      expect(res?.ok()).toBe(true);
      expectDocsHeaders((await res?.allHeaders()) ?? {});
      const textShows = (text: string) =>
        page.getByText(text).first().waitFor({ state: "visible", timeout: RENDER_TIMEOUT_MS });
      // The first tag group is open from the start; the others render when opened.
      await textShows(HEALTH_SUMMARY);
      await page.getByRole("link", { name: "Auth", exact: true }).first().click();
      await textShows(ME_SUMMARY);
      await textShows("/api/v1/me");
      expect(await page.evaluate(() => (document.body.textContent ?? "").includes("/api/admin/"))).toBe(false);
      // Scalar's styles came in under the nonce: the page is laid out, not bare text.
      expect(await page.evaluate(() => document.styleSheets.length)).toBeGreaterThan(0);
      expect(await violationsOf(page), "CSP violations").toEqual([]);
      expectSelfContained(log);
    } finally {
      await page.context().close();
    }
  });

  /** What a page of another origin (a second server) that frames `path` shows in its frame. */
  async function framed(path: string): Promise<{ url: string; text: string }> {
    const other = createServer((_request, response) => {
      response.setHeader("content-type", "text/html; charset=utf-8");
      response.end(`<!doctype html><iframe src="${origin}${path}"></iframe>`);
    });
    await new Promise<void>((resolve) => other.listen(0, "127.0.0.1", resolve));
    const { port } = other.address() as AddressInfo;
    const context = await browser.newContext();
    try {
      const page = await context.newPage();
      await page.goto(`http://127.0.0.1:${port}/`, { waitUntil: "load" });
      const frame = page.frames().find((f) => f !== page.mainFrame());
      const text = (await frame?.evaluate(() => document.body?.textContent ?? "").catch(() => "")) ?? "";
      return { url: frame?.url() ?? "", text };
    } finally {
      await context.close();
      await new Promise((resolve) => other.close(resolve));
    }
  }

  it("another site cannot frame /api/docs or /api/swagger (it can frame the health answer)", {
    timeout: 60_000,
  }, async () => {
    // The control: an answer without the headers shows in the other site's frame.
    const health = await framed("/api/health");
    expect(health.url).toBe(`${origin}/api/health`);
    expect(health.text).toContain("status");
    for (const path of ["/api/docs/", "/api/swagger/"]) {
      const page = await framed(path);
      expect(page.url, path).not.toBe(`${origin}${path}`);
      expect(page.text, path).not.toContain("Swagger");
    }
  });
});
