import { mkdir, readFile } from "node:fs/promises";
import { createRequire } from "node:module";
import { join } from "node:path";
import type { Browser, BrowserContext, Locator, Page } from "playwright-core";
import { expect } from "vitest";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp, type TestAppOptions } from "./app.js";
import { launchChromium } from "./chromium.js";

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
  /** Data requests (fetch, XHR) to our origin outside /api/v1: the dashboard may make none. */
  beyondApi: string[];
}

/**
 * A fresh browser context (its own sessionStorage) whose page records every failure. `timezoneId`:
 * the zone the browser's clock is in (this machine's unless given), which the time zone pickers offer.
 */
export async function openDashboardPage(
  browser: Browser,
  origin: string,
  options: { expectedStatuses?: number[]; timezoneId?: string; phone?: boolean } = {},
): Promise<{ context: BrowserContext; page: Page; log: PageLog }> {
  const context = await browser.newContext({
    // A phone: its width, a touch screen, and the mobile meta viewport honoured.
    ...(options.phone
      ? { viewport: { width: 390, height: 844 }, hasTouch: true, isMobile: true }
      : { viewport: { width: 1024, height: 800 } }),
    ...(options.timezoneId ? { timezoneId: options.timezoneId } : {}),
  });
  const page = await context.newPage();
  const log: PageLog = { ownFailures: [], external: [], consoleErrors: [], pageErrors: [], scripts: [], beyondApi: [] };
  const isOwn = (url: string) => url === origin || url.startsWith(`${origin}/`);
  // The dashboard is a client of /api/v1 like any other: no admin, operator or private route.
  page.on("request", (request) => {
    const type = request.resourceType();
    if ((type === "fetch" || type === "xhr") && isOwn(request.url())) {
      const path = new URL(request.url()).pathname;
      if (!path.startsWith("/api/v1/")) log.beyondApi.push(`${request.method()} ${path}`);
    }
  });
  await page.route("**/*", async (route) => {
    const url = route.request().url();
    if (isOwn(url) || url.startsWith("data:") || url.startsWith("blob:")) return route.continue();
    log.external.push(url);
    return route.abort("blockedbyclient");
  });
  page.on("requestfailed", (request) => {
    const reason = request.failure()?.errorText ?? "failed";
    // ERR_ABORTED is a request the page itself gave up (a navigation while it was in flight, or
    // its own abort), not one the service failed: a test moving on before every fetch of the
    // page it leaves has answered would otherwise fail at random.
    if (isOwn(request.url()) && reason !== "net::ERR_ABORTED") log.ownFailures.push(`${request.url()}: ${reason}`);
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
  expect(log.beyondApi, "data requests outside /api/v1").toEqual([]);
}

/** axe-core finds no serious or critical violation on the page as it stands. */
export async function expectAccessible(page: Page): Promise<void> {
  expect(await seriousViolations(page), "serious or critical accessibility violations").toEqual([]);
}

/** Chrome logs each refused request as a console error: drop those a test provokes on purpose. */
export function dropRefusals(log: PageLog, status: number, path: string): void {
  log.consoleErrors = log.consoleErrors.filter((e) => !(e.includes(`status of ${status}`) && e.includes(path)));
}

/** The whole document and the browser's storage, where a secret must not linger. */
export async function documentText(page: Page): Promise<string> {
  return page.evaluate(
    () =>
      `${document.documentElement.outerHTML}\n${JSON.stringify({ ...sessionStorage })}${JSON.stringify({ ...localStorage })}`,
  );
}

/**
 * Picks `value` from an input's datalist as a person does in the browser's list: the text replaced
 * at once, as one `insertReplacementText` input. The list itself is the browser's own, out of the
 * page's reach.
 */
export async function pickFromList(field: Locator, value: string): Promise<void> {
  await field.focus();
  await field.evaluate((input, picked) => {
    const element = input as HTMLInputElement;
    // The native setter: React reads the change from the input event against the value it last set.
    Object.getOwnPropertyDescriptor(HTMLInputElement.prototype, "value")?.set?.call(element, picked);
    element.dispatchEvent(new InputEvent("input", { bubbles: true, inputType: "insertReplacementText" }));
  }, value);
}

/** Types `text` in the searchable picker labelled `label` and chooses the option named `option` (ARIA combobox). */
export async function pickFromPicker(page: Page, label: string, text: string, option: string): Promise<void> {
  const box = page.getByRole("combobox", { name: label, exact: true });
  await box.click();
  await box.fill(text);
  await page.getByRole("option", { name: option, exact: true }).click({ timeout: WAIT_MS });
  await expect.poll(() => box.getAttribute("aria-expanded"), { timeout: WAIT_MS }).toBe("false");
}

/** The date (YYYY-MM-DD) at `ms` where `zone`'s clock is, read independently of the dashboard's code. */
export function localDay(zone: string, ms = Date.now()): string {
  return new Intl.DateTimeFormat("en-CA", { timeZone: zone, year: "numeric", month: "2-digit", day: "2-digit" }).format(
    ms,
  );
}

/** The calendar day `days` after `day` (negative goes back). */
export function shiftDay(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * 86_400_000).toISOString().slice(0, 10);
}

let personCount = 0;

/** Another person on the tenant, made through the operator surface as an operator would; sign in with it. */
export async function addPerson(
  t: TestApp,
  tenantId: string,
  person: { name: string; permissions: string[] },
): Promise<{ id: string; email: string; password: string }> {
  personCount += 1;
  const email = `person${personCount}-${Date.now()}@example.com`;
  const password = "another correct horse";
  const res = await t.call({
    method: "POST",
    url: `/api/admin/tenants/${tenantId}/users`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { email, password, ...person },
  });
  expect(res.statusCode, res.body).toBe(201);
  return { id: res.json().data.id as string, email, password };
}

/** Signs in and lets the overview finish loading, so leaving it aborts none of its requests. */
export async function signInSettled(page: Page, person: Pick<Tenancy, "email" | "password">): Promise<void> {
  await signIn(page, person);
  await page.waitForFunction(
    () =>
      (document.querySelector(".chart canvas") !== null ||
        document.body.textContent?.includes("No clicks or conversions in this period.")) &&
      document.querySelector(".state-loading, [aria-busy='true']") === null,
    null,
    { timeout: WAIT_MS },
  );
}

const inFlight = new WeakMap<Page, Set<unknown>>();

/** Counts the page's requests still open, for `gotoWhenIdle` to wait on. */
export function trackRequests(page: Page): void {
  const open = new Set<unknown>();
  inFlight.set(page, open);
  page.on("request", (request) => open.add(request));
  page.on("requestfinished", (request) => open.delete(request));
  page.on("requestfailed", (request) => open.delete(request));
}

/** Opens an address once the page (see `trackRequests`) has no request open, so the navigation aborts none. */
export async function gotoWhenIdle(page: Page, url: string): Promise<void> {
  await expect.poll(() => inFlight.get(page)?.size ?? 0, { timeout: WAIT_MS }).toBe(0);
  await page.goto(url);
}

export interface DashboardRun {
  t: TestApp;
  who: Tenancy;
  browser: Browser;
  origin: string;
}

/**
 * The real service on a loopback port with one tenant, and Chromium: what every dashboard test
 * file starts from. `seed` adds the file's own data before the port opens.
 */
export async function startDashboard(
  seed?: (t: TestApp, who: Tenancy) => Promise<unknown>,
  options: TestAppOptions = {},
): Promise<DashboardRun> {
  const t = await startTestApp(options);
  const who = await seedTenancy(t);
  await seed?.(t, who);
  const origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
  return { t, who, origin, browser: await launchChromium() };
}

/** Closes what startDashboard opened, whatever of it a failed start left. */
export async function stopDashboard(run: Partial<DashboardRun>): Promise<void> {
  await run.browser?.close();
  await run.t?.close();
}
