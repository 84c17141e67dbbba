import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { closeIssue, raiseIssue } from "../src/features/issues/index.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { CHROMIUM, hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  dropRefusals,
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  signIn,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// The issues list end to end: open and closed issues raised as the platform raises them, the
// list's filters and pages in the address, and every row the API's own answer.
if (!hasChromium) {
  console.warn(`dashboard issues tests skipped: they need Chromium at ${CHROMIUM} (Debian package 'chromium').`);
}

const WEBHOOKS = 27;
const CLOSED = ["wh_2", "wh_3"];
const PAGE_SIZE = 25;
const KEY_ISSUE = "API key 'Nightly export' expires in 2 days";

interface Listed {
  id: string;
  title: string;
  status: string;
  severity: string;
}

async function apiIssues(t: TestApp, who: Tenancy, query: string): Promise<{ data: Listed[]; total: number }> {
  const res = await t.call({ method: "GET", url: `/api/v1/issues?${query}`, headers: { authorization: who.bearer } });
  expect(res.statusCode).toBe(200);
  return { data: res.json().data, total: res.json().pagination?.total ?? -1 };
}

/** The rows shown: each issue's id (from its link), severity and status, in the order shown. */
async function shownIssues(page: Page): Promise<{ id: string; severity: string; status: string }[]> {
  const table = page.getByRole("table");
  await table.waitFor({ timeout: WAIT_MS });
  return table.locator("tbody tr").evaluateAll((rows) =>
    rows.map((row) => {
      const cells = row.querySelectorAll("td");
      const href = row.querySelector("a")?.getAttribute("href") ?? "";
      return {
        id: href.split("/").pop() ?? "",
        severity: cells[0]?.textContent ?? "",
        status: cells[4]?.textContent ?? "",
      };
    }),
  );
}

const expected = (issues: Listed[]) => issues.map((i) => ({ id: i.id, severity: i.severity, status: i.status }));

describe.skipIf(!hasChromium)("dashboard issues page", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    t = await startTestApp();
    who = await seedTenancy(t);
    for (let i = 1; i <= WEBHOOKS; i++) {
      await raiseIssue(
        t.ctx.db,
        {
          tenantId: who.tenantId,
          kind: "outgoing_webhook_failed",
          severity: i % 3 === 0 ? "critical" : i % 2 === 0 ? "error" : "warning",
          title: `Webhook 'Hook ${i}' keeps failing`,
          subject: { type: "webhook", id: `wh_${i}`, name: `Hook ${i}` },
          details: { failures: i, lastError: "HTTP 503" },
        },
        t.clock.now(),
      );
      t.clock.advance(1000);
    }
    for (const id of CLOSED) {
      await closeIssue(
        t.ctx.db,
        { tenantId: who.tenantId, kind: "outgoing_webhook_failed", subject: { type: "webhook", id } },
        "delivered again",
        t.clock.now(),
      );
      t.clock.advance(1000);
    }
    await raiseIssue(
      t.ctx.db,
      {
        tenantId: who.tenantId,
        kind: "api_token_expiring",
        severity: "warning",
        title: KEY_ISSUE,
        subject: { type: "api_token", id: "tok_1", name: "Nightly export" },
        details: { expiresAt: "2026-12-01", lastUsedAt: null },
      },
      t.clock.now(),
    );
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("lists open and closed issues as the API does, filtered and paged in the address, each linked to its page", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      // Hovering the link asks for the list before the click: the route's loader prefetches it on intent.
      const issuesLink = page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Issues" });
      const prefetched = page.waitForRequest(
        (r) => new URL(r.url()).pathname === "/api/v1/issues" && new URL(r.url()).searchParams.get("limit") === "25",
        { timeout: WAIT_MS },
      );
      await issuesLink.hover();
      await prefetched;
      expect(new URL(page.url()).pathname).toBe("/");
      await issuesLink.click();
      await page.getByRole("heading", { name: "Issues", level: 1 }).waitFor({ timeout: WAIT_MS });

      // Every issue, most recently changed first: the API's first page, and its total.
      const all = await apiIssues(t, who, `limit=${PAGE_SIZE}`);
      expect(all.total).toBe(WEBHOOKS + 1);
      expect(await shownIssues(page)).toEqual(expected(all.data));
      await page.getByText(`1–${PAGE_SIZE} of ${all.total}`).waitFor({ timeout: WAIT_MS });
      const keyRow = page.getByRole("row", { name: new RegExp(KEY_ISSUE) });
      expect(await keyRow.textContent()).toContain("api token Nightly export");
      expect(await keyRow.textContent()).toContain("Last used at: never");
      await screenshot(page, "issues-01-all");
      await expectAccessible(page);

      // The next page, in the address.
      await page.getByRole("button", { name: "Next" }).click();
      await page.waitForURL((url) => url.searchParams.get("offset") === String(PAGE_SIZE));
      const rest = await apiIssues(t, who, `limit=${PAGE_SIZE}&offset=${PAGE_SIZE}`);
      await expect.poll(() => shownIssues(page), { timeout: WAIT_MS }).toEqual(expected(rest.data));

      // Closed only: back to the first page, the API's closed issues.
      await page.getByRole("link", { name: "Closed", exact: true }).click();
      await page.waitForURL((url) => url.searchParams.get("status") === "closed" && !url.searchParams.has("offset"));
      const closed = await apiIssues(t, who, `status=closed&limit=${PAGE_SIZE}`);
      expect(closed.total).toBe(CLOSED.length);
      expect(await page.getByRole("link", { name: "All", exact: true }).getAttribute("class")).toBe("chip");
      expect(await page.getByRole("link", { name: "All", exact: true }).getAttribute("aria-current")).toBeNull();
      expect(await page.getByRole("link", { name: "Closed", exact: true }).getAttribute("aria-current")).toBe("page");
      await expect.poll(() => shownIssues(page), { timeout: WAIT_MS }).toEqual(expected(closed.data));
      expect(await page.getByRole("table").textContent()).toContain("Resolution: delivered again");
      await screenshot(page, "issues-02-closed");
      await expectAccessible(page);

      // Open, of one kind.
      await page.getByRole("link", { name: "Open", exact: true }).click();
      await page.getByLabel("Kind").selectOption("api_token_expiring");
      await page.waitForURL(
        (url) => url.searchParams.get("status") === "open" && url.searchParams.get("kind") === "api_token_expiring",
      );
      const keyIssues = await apiIssues(t, who, `status=open&kind=api_token_expiring&limit=${PAGE_SIZE}`);
      expect(keyIssues.total).toBe(1);
      await expect.poll(() => shownIssues(page), { timeout: WAIT_MS }).toEqual(expected(keyIssues.data));

      // The address alone opens the same list (a shared link), and the title leads to the issue.
      await page.goto(`${origin}/issues?status=open&offset=${PAGE_SIZE}`);
      const openRest = await apiIssues(t, who, `status=open&limit=${PAGE_SIZE}&offset=${PAGE_SIZE}`);
      await expect.poll(() => shownIssues(page), { timeout: WAIT_MS }).toEqual(expected(openRest.data));
      const first = openRest.data[0] as Listed;
      await page.getByRole("link", { name: first.title }).click();
      await page.waitForURL(`${origin}/issues/${first.id}`);
      await page.getByRole("heading", { name: first.title }).waitFor({ timeout: WAIT_MS });
      expect(await page.locator(".facts").textContent()).toContain("HTTP 503");
      await screenshot(page, "issues-03-issue");
      await expectAccessible(page);

      // Back to the list from the issue's page.
      await page.getByRole("link", { name: "Issues", exact: true }).first().click();
      await page.getByRole("heading", { name: "Issues", level: 1 }).waitFor({ timeout: WAIT_MS });
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("says when there is nothing open, and a person without account.admin what is missing", {
    timeout: 90_000,
  }, async () => {
    const calm = await seedTenancy(t);
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in?next=${encodeURIComponent("/issues?status=open")}`);
      await page.getByLabel("Email").fill(calm.email);
      await page.getByLabel("Password").fill(calm.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      await page.getByText("No open issues: everything is running.").waitFor({ timeout: WAIT_MS });
      await screenshot(page, "issues-04-none-open");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }

    const reader = await seedTenancy(t, { permissions: ["reports.read"] });
    const denied = await openDashboardPage(browser, origin, { expectedStatuses: [403] });
    try {
      await denied.page.goto(`${origin}/sign-in`);
      await signIn(denied.page, reader);
      await denied.page.getByRole("navigation", { name: "Main" }).getByRole("link", { name: "Issues" }).click();
      await expect
        .poll(() => denied.page.getByRole("alert").first().textContent(), { timeout: WAIT_MS })
        .toContain("You do not have permission for this");
      await screenshot(denied.page, "issues-05-forbidden");
      await expectAccessible(denied.page);
      expect(denied.log.pageErrors).toEqual([]);
      expect(denied.log.ownFailures).toEqual([]);
      expect(denied.log.consoleErrors.filter((e) => !e.includes("status of 403"))).toEqual([]);
    } finally {
      await denied.context.close();
    }
  });

  it("closes an open issue by hand with a reason, shown on the closed issue", {
    timeout: 120_000,
  }, async () => {
    const owner = await seedTenancy(t);
    const { issue } = await raiseIssue(
      t.ctx.db,
      {
        tenantId: owner.tenantId,
        kind: "outgoing_webhook_failed",
        severity: "error",
        title: "Outgoing Webhook Failed: Old receiver",
        subject: { type: "outgoing_webhook", id: "wh_old", name: "Old receiver" },
        details: { errorType: "http_status", error: "HTTP 503" },
      },
      t.clock.now(),
    );
    const reason = "The receiver was retired; its traffic source is paused.";
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, owner);
      await page.goto(`${origin}/issues/${issue.id}`);
      await page.getByRole("heading", { name: "Close issue" }).waitFor({ timeout: WAIT_MS });
      await page.setViewportSize({ width: 1440, height: 900 });
      await screenshot(page, "issues-06-close-1440");
      await expectAccessible(page);

      // A blank reason: the API's message, under the field.
      await page.getByRole("button", { name: "Close issue" }).click();
      await expect
        .poll(() => page.getByLabel("Reason").getAttribute("aria-invalid"), { timeout: WAIT_MS })
        .toBe("true");
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "issues-07-close-refused-390");
      await expectAccessible(page);

      await page.getByLabel("Reason").fill(reason);
      await page.getByRole("button", { name: "Close issue" }).click();
      await page.getByRole("heading", { name: "Close issue" }).waitFor({ state: "detached", timeout: WAIT_MS });
      await expect.poll(() => page.locator(".facts").textContent(), { timeout: WAIT_MS }).toContain(reason);
      const res = await t.call({
        method: "GET",
        url: `/api/v1/issues/${issue.id}`,
        headers: { authorization: owner.bearer },
      });
      expect(res.json().data).toMatchObject({ status: "closed", closedReason: reason });
      await screenshot(page, "issues-08-closed-390");
      await expectAccessible(page);
      await page.setViewportSize({ width: 1440, height: 900 });
      await screenshot(page, "issues-09-closed-1440");
      dropRefusals(log, 400, `/api/v1/issues/${issue.id}/close`);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
