import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY_MS } from "../src/platform/durations.js";
import { withLabel } from "../web/src/components/field-message.js";
import { ADMIN_KEY, createKeyViaApi, seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { hasChromium } from "./helpers/chromium.js";
import {
  addPerson,
  documentText,
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

// The API keys page end to end: the real service on loopback, its built assets, Chromium. A
// new key's value is on screen once, then nowhere: not in the DOM, not in the browser's storage.

const ADMIN = { authorization: `Bearer ${ADMIN_KEY}` };
const day = (ms: number) => new Date(ms).toISOString().slice(0, 10);

describe.skipIf(!hasChromium)("dashboard: API keys", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    ({ t, who, browser, origin } = await startDashboard());
  }, 120_000);

  afterAll(() => stopDashboard({ t, browser }));

  const apiMessage = async (payload: object, path: string) => {
    const res = await t.call({
      method: "POST",
      url: "/api/v1/api-tokens",
      headers: { authorization: who.bearer },
      payload,
    });
    expect(res.statusCode).toBe(400);
    const error = (res.json().data.errors as { path: string; message: string }[]).find((e) => e.path === path);
    if (!error) throw new Error(`no error for ${path}: ${res.body}`);
    return error.message;
  };

  it("creates a key shown exactly once, refuses bad input beside its field, and deletes after confirming", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.getByRole("link", { name: "API keys" }).click();
      await page.getByRole("heading", { name: "API keys", level: 1 }).waitFor({ timeout: WAIT_MS });
      // The seeded key, as the API lists it.
      const seeded = page.getByRole("row").filter({ hasText: who.apiKeyId });
      await seeded.waitFor({ timeout: WAIT_MS });
      expect(await seeded.textContent()).toContain("legacy (no scopes)");
      await screenshot(page, "api-keys-01-list");
      await expectAccessible(page);

      await page.getByRole("button", { name: "Create an API key" }).click();
      await page.getByRole("checkbox", { name: "reports.read" }).waitFor({ timeout: WAIT_MS });
      // Every scope the API lets this person grant is offered, no other.
      const scopes = await t.call({
        method: "GET",
        url: "/api/v1/api-tokens/scopes",
        headers: { authorization: who.bearer },
      });
      expect(await page.getByRole("checkbox").count()).toBe((scopes.json().data as string[]).length);

      // A name too short: the API's message, next to the name.
      const name = page.getByLabel("Name", { exact: true });
      await name.fill("abc");
      await page.getByRole("button", { name: "Create key" }).click();
      const tooShort = await apiMessage({ name: "abc" }, "name");
      await expect.poll(() => name.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const nameHelp = await name.getAttribute("aria-describedby");
      expect(await page.locator(`[id="${nameHelp?.split(" ").at(-1)}"]`).textContent()).toBe(
        withLabel("Name", tooShort),
      );
      await screenshot(page, "api-keys-02-name-refused");
      await expectAccessible(page);

      // An expiry in the past: the API's message, next to the expiry.
      await name.fill("Nightly export");
      const expiry = page.getByLabel("Expires on (UTC)");
      await expiry.fill(day(Date.now() - DAY_MS));
      await page.getByRole("button", { name: "Create key" }).click();
      const past = await apiMessage(
        { name: "Nightly export", expirationDate: `${day(Date.now() - DAY_MS)}T00:00:00.000Z` },
        "expirationDate",
      );
      await expect.poll(() => expiry.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const expiryHelp = await expiry.getAttribute("aria-describedby");
      expect(await page.locator(`[id="${expiryHelp?.split(" ").at(-1)}"]`).textContent()).toBe(
        withLabel("Expires on (UTC)", past),
      );
      expect(await name.getAttribute("aria-invalid")).toBeNull();
      await screenshot(page, "api-keys-03-expiry-refused");

      // A good one: 30 days, one scope.
      const expires = day(Date.now() + 30 * DAY_MS);
      await expiry.fill(expires);
      await page.getByRole("checkbox", { name: "reports.read" }).check();
      await page.getByRole("button", { name: "Create key" }).click();
      const shown = page.getByTestId("secret-value");
      await shown.waitFor({ timeout: WAIT_MS });
      const key = String(await shown.textContent());
      expect(key.length).toBeGreaterThan(30);
      expect(await page.getByText("it is shown only this once").count()).toBe(1);
      await page.getByRole("row").filter({ hasText: "Nightly export" }).waitFor({ timeout: WAIT_MS });
      await screenshot(page, "api-keys-04-created");
      await expectAccessible(page);
      // Shown once on the page: in the notice, not in the list.
      expect((await documentText(page)).split(key).length - 1).toBe(1);
      expect(page.url()).not.toContain(encodeURIComponent(key).slice(0, 20));

      // The key works against the API, and is listed with what was chosen.
      const listed = await t.call({
        method: "GET",
        url: "/api/v1/api-tokens",
        headers: { authorization: `ApiKey ${key}` },
      });
      expect(listed.statusCode).toBe(200);
      const created = (
        listed.json().data as { id: string; name: string; scopes: string[]; expirationDate: string }[]
      ).find((k) => k.name === "Nightly export");
      expect(created?.scopes).toEqual(["reports.read"]);
      expect(created?.expirationDate.slice(0, 10)).toBe(expires);
      const row = page.getByRole("row").filter({ hasText: "Nightly export" });
      expect(await row.textContent()).toContain("reports.read");
      expect(await row.textContent()).toContain("never");

      // Dismissed: gone from the page.
      await page.getByRole("button", { name: "I have copied it" }).click();
      await shown.waitFor({ state: "detached", timeout: WAIT_MS });
      expect(await documentText(page)).not.toContain(key);

      // A second key, left on screen: navigating away and back, or reloading, never shows it again.
      await page.getByRole("button", { name: "Create an API key" }).click();
      await page.getByLabel("Name", { exact: true }).fill("Left on screen");
      await page.getByRole("button", { name: "Create key" }).click();
      await shown.waitFor({ timeout: WAIT_MS });
      const second = String(await shown.textContent());
      await page.getByRole("link", { name: "Settings" }).click();
      await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor({ timeout: WAIT_MS });
      await page.getByRole("link", { name: "API keys" }).click();
      await page.getByRole("row").filter({ hasText: "Left on screen" }).waitFor({ timeout: WAIT_MS });
      const afterReturn = await documentText(page);
      expect(afterReturn).not.toContain(second);
      expect(afterReturn).not.toContain(key);
      await page.reload();
      await page.getByRole("row").filter({ hasText: "Left on screen" }).waitFor({ timeout: WAIT_MS });
      expect(await documentText(page)).not.toContain(second);
      expect(await page.getByTestId("secret-value").count()).toBe(0);

      // Delete: asks first; Cancel keeps the key.
      await page.getByRole("button", { name: "Delete Nightly export" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.waitFor({ timeout: WAIT_MS });
      expect(await dialog.textContent()).toContain("Delete the API key 'Nightly export'?");
      await screenshot(page, "api-keys-05-confirm-delete");
      await expectAccessible(page);
      await dialog.getByRole("button", { name: "Cancel" }).click();
      await dialog.waitFor({ state: "hidden", timeout: WAIT_MS });
      const stillThere = await t.call({
        method: "GET",
        url: `/api/v1/api-tokens/${created?.id}`,
        headers: { authorization: who.bearer },
      });
      expect(stillThere.statusCode).toBe(200);

      await page.getByRole("button", { name: "Delete Nightly export" }).click();
      await dialog.getByRole("button", { name: "Delete Nightly export" }).click();
      await page.getByText("Deleted the key 'Nightly export'").waitFor({ timeout: WAIT_MS });
      await page
        .getByRole("row")
        .filter({ hasText: "Nightly export" })
        .waitFor({ state: "detached", timeout: WAIT_MS });
      const gone = await t.call({
        method: "GET",
        url: `/api/v1/api-tokens/${created?.id}`,
        headers: { authorization: who.bearer },
      });
      expect(gone.statusCode).toBe(404);
      const refused = await t.call({
        method: "GET",
        url: "/api/v1/api-tokens",
        headers: { authorization: `ApiKey ${key}` },
      });
      expect(refused.statusCode).toBe(401);
      await screenshot(page, "api-keys-06-deleted");

      dropRefusals(log, 400, "/api/v1/api-tokens");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("pages the list, with the page in the address", { timeout: 120_000 }, async () => {
    const paged = await seedTenancy(t);
    for (let n = 1; n <= 22; n += 1) await createKeyViaApi(t, paged, `Paged key ${String(n).padStart(2, "0")}`);
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, paged);
      await page.getByRole("link", { name: "API keys" }).click();
      const pager = page.getByRole("navigation", { name: "API keys pages" });
      await pager.getByText("1–20 of 23").waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("row").count()).toBe(21);
      await pager.getByRole("button", { name: "Next" }).click();
      await page.waitForURL((url) => url.searchParams.get("offset") === "20");
      await pager.getByText("21–23 of 23").waitFor({ timeout: WAIT_MS });
      // The API's second page, in its order (newest first).
      const second = await t.call({
        method: "GET",
        url: "/api/v1/api-tokens?offset=20&limit=20",
        headers: { authorization: paged.bearer },
      });
      const names = (second.json().data as { name: string }[]).map((k) => k.name);
      const shown = await page.locator(".data-table tbody tr td:first-child strong").allTextContents();
      expect(shown).toEqual(names);
      await page.reload();
      await pager.getByText("21–23 of 23").waitFor({ timeout: WAIT_MS });
      await screenshot(page, "api-keys-09-second-page");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("says clearly when the tenant's plan leaves API keys out", { timeout: 90_000 }, async () => {
    const planless = await seedTenancy(t);
    const off = await t.call({
      method: "PATCH",
      url: `/api/admin/tenants/${planless.tenantId}`,
      headers: ADMIN,
      payload: { entitlements: { apiTokens: false } },
    });
    expect(off.statusCode, off.body).toBe(200);
    const refusal = await t.call({
      method: "GET",
      url: "/api/v1/api-tokens",
      headers: { authorization: planless.bearer },
    });
    expect(refusal.statusCode).toBe(403);
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [403] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, planless);
      await page.getByRole("link", { name: "API keys" }).click();
      await page
        .getByRole("alert")
        .getByText(`You do not have permission for this: ${refusal.json().message}`)
        .waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("button", { name: "Create an API key" }).count()).toBe(0);
      await screenshot(page, "api-keys-10-plan-refused");
      await expectAccessible(page);
      dropRefusals(log, 403, "/api/v1/api-tokens");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("offers no create or delete to a person without account.admin", { timeout: 90_000 }, async () => {
    const reader = await addPerson(t, who.tenantId, { name: "Colleague", permissions: ["reports.read", "usage.read"] });
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, reader);
      await page.getByRole("link", { name: "API keys" }).click();
      await page.getByText("API keys are managed by account admins").waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("button", { name: "Create an API key" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: /^Delete/ }).count()).toBe(0);
      expect(await page.getByRole("table").count()).toBe(0);
      await screenshot(page, "api-keys-07-reader");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("says clearly when the API refuses a person who lost account.admin", { timeout: 90_000 }, async () => {
    const admin = await addPerson(t, who.tenantId, { name: "Colleague", permissions: ["account.admin"] });
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [403] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, admin);
      await page.getByRole("link", { name: "API keys" }).click();
      await page.getByRole("row").filter({ hasText: who.apiKeyId }).waitFor({ timeout: WAIT_MS });
      // The operator takes the permission away while the page is open.
      const demoted = await t.call({
        method: "PATCH",
        url: `/api/admin/users/${admin.id}`,
        headers: ADMIN,
        payload: { permissions: ["reports.read"] },
      });
      expect(demoted.statusCode, demoted.body).toBe(200);
      await page.getByRole("button", { name: "Create an API key" }).click();
      await page
        .getByText(/You do not have permission for this/)
        .first()
        .waitFor({ timeout: WAIT_MS });
      await page.getByLabel("Name", { exact: true }).fill("Not allowed");
      await page.getByRole("button", { name: "Create key" }).click();
      await expect
        .poll(() => page.locator(".form-error").textContent(), { timeout: WAIT_MS })
        .toContain("You do not have permission for this");
      await screenshot(page, "api-keys-08-refused");
      await expectAccessible(page);
      const list = await t.call({
        method: "GET",
        url: "/api/v1/api-tokens?limit=100",
        headers: { authorization: who.bearer },
      });
      expect((list.json().data as { name: string }[]).some((k) => k.name === "Not allowed")).toBe(false);
      dropRefusals(log, 403, "/api/v1/api-tokens");
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
