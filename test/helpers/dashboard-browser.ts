import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, BrowserContext, Page } from "playwright-core";
import { expect } from "vitest";
import type { Tenancy } from "./app.js";

/** Screenshots land here (git-ignored), one per page, to look at. */
export const ARTIFACTS = join(import.meta.dirname, "..", "..", "artifacts", "dashboard");

export interface PageLog {
  /** Requests to our origin that failed or answered 5xx, or 4xx other than those expected. */
  ownFailures: string[];
  /** Requests that left our origin (aborted). */
  external: string[];
  consoleErrors: string[];
  pageErrors: string[];
  /** Every JS and CSS answer: URL and bytes on the wire (compressed body + headers). */
  scripts: { url: string; bytes: number }[];
}

/** A fresh browser context (its own sessionStorage) whose page records every failure. */
export async function openDashboardPage(
  browser: Browser,
  origin: string,
  options: { expectedStatuses?: number[] } = {},
): Promise<{ context: BrowserContext; page: Page; log: PageLog }> {
  const context = await browser.newContext({ viewport: { width: 1024, height: 800 } });
  const page = await context.newPage();
  const log: PageLog = { ownFailures: [], external: [], consoleErrors: [], pageErrors: [], scripts: [] };
  const isOwn = (url: string) => url === origin || url.startsWith(`${origin}/`);
  await page.route("**/*", async (route) => {
    const url = route.request().url();
    if (isOwn(url) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    log.external.push(url);
    return route.abort("blockedbyclient");
  });
  page.on("requestfailed", (request) => {
    if (isOwn(request.url())) log.ownFailures.push(`${request.url()}: ${request.failure()?.errorText ?? "failed"}`);
  });
  page.on("response", (response) => {
    const status = response.status();
    if (isOwn(response.url()) && status >= 400 && !options.expectedStatuses?.includes(status)) {
      log.ownFailures.push(`${response.url()}: HTTP ${status}`);
    }
  });
  page.on("requestfinished", async (request) => {
    const type = request.resourceType();
    if (type !== "script" && type !== "stylesheet") return;
    const sizes = await request.sizes().catch(() => null);
    if (sizes) log.scripts.push({ url: request.url(), bytes: sizes.responseBodySize + sizes.responseHeadersSize });
  });
  page.on("console", (message) => {
    if (message.type() === "error") log.consoleErrors.push(`${message.text()} (${message.location().url})`);
  });
  page.on("pageerror", (error) => log.pageErrors.push(error.message));
  return { context, page, log };
}

const require = createRequire(import.meta.url);
let axeSource: string | undefined;

export interface AxeViolation {
  id: string;
  impact: string | null;
  help: string;
  nodes: string[];
}

/**
 * Runs axe-core in the page. It is evaluated through the DevTools protocol, which the page's
 * content security policy does not govern (an injected script tag would be refused, rightly).
 */
export async function axeViolations(page: Page): Promise<AxeViolation[]> {
  axeSource ??= await readFile(require.resolve("axe-core/axe.min.js"), "utf8");
  await page.evaluate(axeSource);
  return page.evaluate(async () => {
    const axe = (
      window as unknown as {
        axe: {
          run(
            context: Document,
            options: object,
          ): Promise<{
            violations: { id: string; impact: string | null; help: string; nodes: { target: unknown[] }[] }[];
          }>;
        };
      }
    ).axe;
    const result = await axe.run(document, { resultTypes: ["violations"] });
    return result.violations.map((v) => ({
      id: v.id,
      impact: v.impact,
      help: v.help,
      nodes: v.nodes.map((n) => JSON.stringify(n.target)),
    }));
  });
}

/** The serious and critical ones: what the dashboard must not have. */
export async function seriousViolations(page: Page): Promise<AxeViolation[]> {
  return (await axeViolations(page)).filter((v) => v.impact === "serious" || v.impact === "critical");
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(ARTIFACTS, { recursive: true });
  await page.screenshot({ path: join(ARTIFACTS, `${name}.png`), fullPage: true });
}

/** How long a page may take to show what a test waits for. */
export const WAIT_MS = 20_000;

/** Signs in through the form and waits for the overview, where a session starts. */
export async function signIn(page: Page, who: Pick<Tenancy, "email" | "password">): Promise<void> {
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: "Overview", level: 1 }).waitFor({ timeout: WAIT_MS });
}

/** No error anywhere; `refusedSignIn`: Chrome logs the one 401 of a wrong password, which is expected. */
export function expectClean(log: PageLog, refusedSignIn = false): void {
  expect(log.pageErrors, "uncaught errors in the page").toEqual([]);
  const errors = refusedSignIn
    ? log.consoleErrors.filter((e) => !(e.includes("status of 401") && e.includes("/api/v1/auth)")))
    : log.consoleErrors;
  expect(errors, "console errors").toEqual([]);
  expect(log.external, "requests to another origin").toEqual([]);
  expect(log.ownFailures, "failed requests to the service").toEqual([]);
}

/** axe-core finds no serious or critical violation on the page as it stands. */
export async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page), "serious or critical accessibility violations").toEqual([]);
}
