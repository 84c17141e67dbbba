import type { Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tenancy } from "./helpers/app.js";
import { hasChromium } from "./helpers/chromium.js";
import {
  addPerson,
  type DashboardRun,
  dropRefusals,
  expectAccessible,
  expectClean,
  gotoWhenIdle,
  openDashboardPage,
  type PageLog,
  screenshot,
  signInSettled,
  startDashboard,
  stopDashboard,
  trackRequests,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";
import {
  type Conversion,
  createHook,
  getHook,
  recordConversion,
  WEBHOOK_ENV,
  WEBHOOKS_API,
} from "./helpers/webhooks.js";

// Conversion statuses in the dashboard, end to end against the real service: the list's Status
// column and filter, a conversion's history and its "Change status" form (PATCH, checked through
// the API afterwards), the form's absence for a person without conversions.update, and the
// webhook form's "Send status changes". Each page is photographed at 1280 and 390 px wide.

const PAGE_SIZE = 25;

/** The page at a desktop and a phone width, full length (the dashboard's screenshot helper); the phone must not scroll sideways. */
async function shoot(page: Page, name: string): Promise<void> {
  await page.setViewportSize({ width: 1280, height: 800 });
  await screenshot(page, `${name}-1280`);
  await page.setViewportSize({ width: 390, height: 844 });
  await screenshot(page, `${name}-390`);
  expect(await page.evaluate(() => document.documentElement.scrollWidth), `${name} at 390 px`).toBeLessThanOrEqual(390);
  await page.setViewportSize({ width: 1024, height: 800 });
}

describe.skipIf(!hasChromium)("dashboard: conversion statuses", () => {
  let run: DashboardRun;
  let who: Tenancy;
  let pending: Conversion;
  let approved: Conversion;
  let rejected: Conversion;
  let reversed: Conversion;

  const call = async (method: "GET" | "PATCH", url: string, payload?: Record<string, unknown>) => {
    const res = await run.t.call({
      method,
      url,
      headers: { authorization: who.bearer },
      ...(payload ? { payload } : {}),
    });
    return { status: res.statusCode, body: res.json() };
  };

  beforeAll(async () => {
    run = await startDashboard(
      async (t, tenancy) => {
        // A status sent with the conversion (any case), one without (approved), and one changed
        // afterwards through the API with a reason.
        pending = await recordConversion(t, { apiKey: tenancy.apiKey }, { type: "Signup", status: "Pending" });
        approved = await recordConversion(
          t,
          { apiKey: tenancy.apiKey },
          { type: "Deposit", value: 10, currency: "EUR", externalId: "status-approved" },
        );
        rejected = await recordConversion(
          t,
          { apiKey: tenancy.apiKey },
          { type: "FirstTimeDeposit", value: 20, status: "rejected" },
        );
        reversed = await recordConversion(t, { apiKey: tenancy.apiKey }, { type: "Deposit", value: 30 });
        const patched = await t.call({
          method: "PATCH",
          url: `/api/v1/conversions/${reversed.id}`,
          headers: { authorization: tenancy.apiKey },
          payload: { status: "reversed", reason: "chargeback" },
        });
        expect(patched.statusCode, patched.body).toBe(200);
      },
      { env: WEBHOOK_ENV },
    );
    who = run.who;
  }, 120_000);

  afterAll(async () => {
    await stopDashboard(run);
  });

  async function apiList(params: Record<string, string> = {}) {
    const query = new URLSearchParams({ limit: String(PAGE_SIZE), ...params });
    const res = await call("GET", `/api/v1/conversions?${query}`);
    expect(res.status, JSON.stringify(res.body)).toBe(200);
    return (res.body.data as { id: string; status: string }[]).map((c) => ({ id: c.id, status: c.status }));
  }

  /** Each row of the list: the conversion's id (from its link) and the status its badge shows. */
  const shownRows = (page: Page) =>
    page.$$eval("table.data-table tbody tr", (trs) =>
      trs.map((tr) => ({
        id: decodeURIComponent(
          new URL((tr.querySelector("td:first-child a") as HTMLAnchorElement).href).pathname.split("/").pop() ?? "",
        ),
        status: tr.querySelector(".conversion-status")?.getAttribute("data-status") ?? "",
        label: tr.querySelector(".conversion-status")?.textContent ?? "",
      })),
    );

  async function expectRows(page: Page, rows: { id: string; status: string }[]) {
    await expect
      .poll(async () => (await shownRows(page)).map(({ id, status }) => ({ id, status })), { timeout: WAIT_MS })
      .toEqual(rows);
  }

  async function signedIn(person: { email: string; password: string }, options: { expectedStatuses?: number[] } = {}) {
    const opened = await openDashboardPage(run.browser, run.origin, options);
    trackRequests(opened.page);
    await opened.page.goto(`${run.origin}/sign-in`);
    await signInSettled(opened.page, person);
    return opened;
  }

  it("shows each conversion's status and filters by status through the address", { timeout: 120_000 }, async () => {
    const { context, page, log } = await signedIn(who);
    try {
      await page.getByRole("link", { name: "Conversions", exact: true }).click();
      await page.getByRole("heading", { name: "Conversions", level: 1 }).waitFor({ timeout: WAIT_MS });
      const all = await apiList();
      expect(new Set(all.map((c) => c.status))).toEqual(new Set(["pending", "approved", "rejected", "reversed"]));
      await expectRows(page, all);
      // The badge reads as a word, not the API's spelling.
      const labels = Object.fromEntries((await shownRows(page)).map((r) => [r.id, r.label]));
      expect(labels).toMatchObject({
        [pending.id]: "Pending",
        [approved.id]: "Approved",
        [rejected.id]: "Rejected",
        [reversed.id]: "Reversed",
      });
      expect(await page.getByRole("columnheader", { name: "Status" }).count()).toBe(1);
      await expectAccessible(page);
      await shoot(page, "conversions-list");

      // One status: the address carries it and the list is the API's for it.
      await page.getByRole("checkbox", { name: "Pending" }).check();
      await page.getByRole("button", { name: "Apply" }).click();
      await page.waitForURL((url) => url.searchParams.get("status") === "pending");
      const onlyPending = await apiList({ status: "pending" });
      expect(onlyPending).toEqual([{ id: pending.id, status: "pending" }]);
      await expectRows(page, onlyPending);
      await expectAccessible(page);
      await shoot(page, "conversions-list-pending");

      // A shared address with two (in any case) opens them checked, the list the API's for both.
      await gotoWhenIdle(page, `${run.origin}/conversions?status=Reversed,rejected`);
      const notCounted = await apiList({ status: "rejected,reversed" });
      expect(notCounted.map((c) => c.id).sort()).toEqual([rejected.id, reversed.id].sort());
      await expectRows(page, notCounted);
      expect(await page.getByRole("checkbox", { name: "Rejected" }).isChecked()).toBe(true);
      expect(await page.getByRole("checkbox", { name: "Reversed" }).isChecked()).toBe(true);
      expect(await page.getByRole("checkbox", { name: "Pending" }).isChecked()).toBe(false);

      // Clear: every status again.
      await page.getByRole("button", { name: "Clear" }).click();
      await page.waitForURL((url) => url.search === "");
      await expectRows(page, all);
      expect(await page.getByRole("checkbox", { name: "Rejected" }).isChecked()).toBe(false);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("shows a conversion's history and changes its status with a reason", { timeout: 120_000 }, async () => {
    const { context, page, log } = await signedIn(who, { expectedStatuses: [400] });
    try {
      // The history of a change made through the API: the recording, then the change, who and why.
      await gotoWhenIdle(page, `${run.origin}/conversions/${reversed.id}`);
      const history = page.getByRole("table", { name: "Status history, oldest first" });
      await expect.poll(() => history.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(2);
      const apiHistory = (await call("GET", `/api/v1/conversions/${reversed.id}/history`)).body.data as {
        status: string;
        reason: string | null;
        source: string;
        by: { type: string; name: string | null };
      }[];
      expect(apiHistory.map((e) => e.status)).toEqual(["approved", "reversed"]);
      const rows = history.locator("tbody tr");
      expect(await rows.nth(0).textContent()).toContain("Approved");
      expect(await rows.nth(0).textContent()).toContain("recorded");
      const change = await rows.nth(1).textContent();
      expect(change).toContain("Reversed");
      expect(change).toContain("chargeback");
      expect(change).toContain("API");
      expect(change).toContain(`API key: ${apiHistory[1]?.by.name}`);
      expect(await page.locator(".facts").textContent()).toContain("Reversed");
      await expectAccessible(page);
      await shoot(page, "conversion-history");

      // Changing the pending signup to rejected, with a reason, from its page.
      await gotoWhenIdle(page, `${run.origin}/conversions/${pending.id}`);
      const form = page.getByRole("form", { name: "Change status" });
      await form.waitFor({ timeout: WAIT_MS });
      await expect.poll(() => history.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(1);
      await form.getByLabel("New status").selectOption("rejected");
      await form.getByLabel("Reason").fill("duplicate player");
      await form.getByRole("button", { name: "Change status" }).click();
      await page.locator(".action-result").getByText("Status changed to rejected.").waitFor({ timeout: WAIT_MS });
      // The page follows: its status, and the history's new row.
      await expect.poll(() => history.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(2);
      const added = await history.locator("tbody tr").nth(1).textContent();
      expect(added).toContain("Rejected");
      expect(added).toContain("duplicate player");
      expect(added).toContain("Dashboard");
      await expect.poll(() => page.locator(".facts").textContent()).toContain("Rejected");
      expect(await form.getByLabel("Reason").inputValue()).toBe("");
      // The API says the same.
      const now = (await call("GET", `/api/v1/conversions/${pending.id}`)).body.data;
      expect(now.status).toBe("rejected");
      const after = (await call("GET", `/api/v1/conversions/${pending.id}/history`)).body.data as {
        status: string;
        reason: string | null;
        source: string;
        by: { type: string; id: string | null; name: string | null };
      }[];
      expect(after.map((e) => e.status)).toEqual(["pending", "rejected"]);
      expect(after[1]).toMatchObject({
        status: "rejected",
        reason: "duplicate player",
        source: "dashboard",
        by: { type: "user", id: who.userId },
      });
      expect(added).toContain(`Person: ${after[1]?.by.name}`);
      await expectAccessible(page);
      await shoot(page, "conversion-changed");

      // The same status again changes nothing, and the page says so in the API's words.
      await form.getByLabel("New status").selectOption("rejected");
      await form.getByRole("button", { name: "Change status" }).click();
      await page
        .locator(".action-result")
        .getByText("The status was already rejected: nothing changed.")
        .waitFor({ timeout: WAIT_MS });
      expect((await call("GET", `/api/v1/conversions/${pending.id}/history`)).body.data).toHaveLength(2);

      // A reason longer than the API takes (the field's own limit lifted): its refusal, next to the field.
      const tooLong = "x".repeat(501);
      const refusal = await call("PATCH", `/api/v1/conversions/${pending.id}`, { status: "approved", reason: tooLong });
      expect(refusal.status).toBe(400);
      // The field's own words (the envelope's message names the field, which the label already does).
      const [said] = refusal.body.data.errors as { path: string; message: string }[];
      expect(said?.path).toBe("reason");
      const reason = form.getByLabel("Reason");
      await reason.evaluate((input) => input.removeAttribute("maxlength"));
      await form.getByLabel("New status").selectOption("approved");
      await reason.fill(tooLong);
      await form.getByRole("button", { name: "Change status" }).click();
      const reasonField = page.locator(".field").filter({ has: page.getByLabel("Reason") });
      await reasonField
        .getByRole("alert")
        .getByText(said?.message ?? "")
        .waitFor({ timeout: WAIT_MS });
      expect(await reason.getAttribute("aria-invalid")).toBe("true");
      expect((await call("GET", `/api/v1/conversions/${pending.id}`)).body.data.status).toBe("rejected");
      await shoot(page, "conversion-refused");
      forget(log, 400, `/api/v1/conversions/${pending.id}`);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("offers no status change to a person without conversions.update", { timeout: 90_000 }, async () => {
    // reports.read too: the overview, where signing in lands, reads the reports.
    const reader = await addPerson(run.t, who.tenantId, {
      name: "Read Only",
      permissions: ["conversions.read", "reports.read"],
    });
    const { context, page, log } = await signedIn(reader);
    try {
      await gotoWhenIdle(page, `${run.origin}/conversions/${reversed.id}`);
      const history = page.getByRole("table", { name: "Status history, oldest first" });
      await expect.poll(() => history.locator("tbody tr").count(), { timeout: WAIT_MS }).toBe(2);
      await page.getByText("Changing a conversion's status needs the conversions.update permission.").waitFor();
      expect(await page.getByRole("form", { name: "Change status" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Change status" }).count()).toBe(0);
      await expectAccessible(page);
      await shoot(page, "conversion-reader");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("saves a webhook's Send status changes", { timeout: 90_000 }, async () => {
    const hook = await createHook(run.t, { apiKey: who.apiKey }, { url: "http://127.0.0.1:9/hook?c={{conversionId}}" });
    expect(hook.statusChanges).toBe(false);
    const { context, page, log } = await signedIn(who);
    try {
      // A new webhook starts without it.
      await gotoWhenIdle(page, `${run.origin}/webhooks/new`);
      await page.getByRole("heading", { level: 1, name: "New webhook" }).waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("checkbox", { name: "Send status changes" }).isChecked()).toBe(false);
      await shoot(page, "webhook-new");

      await gotoWhenIdle(page, `${run.origin}/webhooks/${hook.id}`);
      await page.getByRole("heading", { level: 1, name: hook.name }).waitFor({ timeout: WAIT_MS });
      const box = page.getByRole("checkbox", { name: "Send status changes" });
      expect(await box.isChecked()).toBe(false);
      await box.check();
      await page.getByRole("button", { name: "Save changes" }).click();
      await page.locator(".action-result").getByText(`${hook.name} was saved.`).waitFor({ timeout: WAIT_MS });
      expect((await getHook(run.t, { apiKey: who.apiKey }, hook.id)).statusChanges).toBe(true);
      // What was saved, after a reload too; and unchecked again, it saves false.
      await page.reload();
      await page.getByRole("heading", { level: 1, name: hook.name }).waitFor({ timeout: WAIT_MS });
      await expect.poll(() => box.isChecked(), { timeout: WAIT_MS }).toBe(true);
      await expectAccessible(page);
      await shoot(page, "webhook-edit");

      // A change of status now makes one more delivery, carrying the new status: listed on the
      // conversion's page and on the delivery's own.
      const changed = await call("PATCH", `/api/v1/conversions/${approved.id}`, {
        status: "reversed",
        reason: "refund",
      });
      expect(changed.status, JSON.stringify(changed.body)).toBe(200);
      const events = (await call("GET", `${WEBHOOKS_API}/events?conversionId=${approved.id}`)).body.data as {
        id: string;
        conversionStatus: string | null;
      }[];
      expect(events.map((e) => e.conversionStatus)).toEqual(["reversed"]);
      const eventId = events[0]?.id ?? "";
      await gotoWhenIdle(page, `${run.origin}/conversions/${approved.id}`);
      const postbacks = page.getByRole("table", { name: "Postbacks this conversion caused" });
      await postbacks.getByRole("link", { name: eventId }).waitFor({ timeout: WAIT_MS });
      expect(await postbacks.locator(".conversion-status").getAttribute("data-status")).toBe("reversed");
      await postbacks.getByRole("link", { name: eventId }).click();
      await page.getByRole("heading", { level: 1 }).first().waitFor({ timeout: WAIT_MS });
      const facts = page.locator(".facts");
      await expect.poll(() => facts.textContent(), { timeout: WAIT_MS }).toContain("Conversion statusReversed");
      await expectAccessible(page);
      await shoot(page, "webhook-delivery");

      await gotoWhenIdle(page, `${run.origin}/webhooks/${hook.id}`);
      await page.getByRole("heading", { level: 1, name: hook.name }).waitFor({ timeout: WAIT_MS });
      await expect.poll(() => box.isChecked(), { timeout: WAIT_MS }).toBe(true);
      await box.uncheck();
      await page.getByRole("button", { name: "Save changes" }).click();
      await expect
        .poll(async () => (await getHook(run.t, { apiKey: who.apiKey }, hook.id)).statusChanges, { timeout: WAIT_MS })
        .toBe(false);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
  it("offers Send status changes on a traffic source's postback", { timeout: 90_000 }, async () => {
    const created = await run.t.call({
      method: "POST",
      url: "/api/v1/traffic-sources",
      headers: { authorization: who.bearer },
      payload: { name: "Network", postback: { url: "http://127.0.0.1:9/pb?c={{conversionId}}", statusChanges: true } },
    });
    expect(created.statusCode, created.body).toBe(201);
    const source = created.json().data as { id: number; postback: { statusChanges: boolean } };
    expect(source.postback.statusChanges).toBe(true);
    const { context, page, log } = await signedIn(who);
    try {
      await gotoWhenIdle(page, `${run.origin}/catalog/traffic-sources/${source.id}/postback`);
      await page.getByRole("heading", { level: 1, name: "Network: Postback" }).waitFor({ timeout: WAIT_MS });
      const box = page.getByRole("checkbox", { name: "Send status changes" });
      await expect.poll(() => box.isChecked(), { timeout: WAIT_MS }).toBe(true);
      await expectAccessible(page);
      await shoot(page, "traffic-source-postback");
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});

/** The refusal a step provokes on purpose: Chromium logs its 4xx, and the log counts it. */
function forget(log: PageLog, status: number, path: string): void {
  dropRefusals(log, status, path);
  log.ownFailures = log.ownFailures.filter((f) => !(f.includes(path) && f.endsWith(`HTTP ${status}`)));
}
