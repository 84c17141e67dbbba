import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tenancy, TestApp } from "./helpers/app.js";
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

// The settings page end to end: what the person is and may do (GET /me), the default currency
// saved through PATCH /settings, and the postback key, shown only in the rotation's answer.

describe.skipIf(!hasChromium)("dashboard: settings", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    ({ t, who, browser, origin } = await startDashboard());
  }, 120_000);

  afterAll(() => stopDashboard({ t, browser }));

  const settings = async () =>
    (await t.call({ method: "GET", url: "/api/v1/settings", headers: { authorization: who.bearer } })).json().data;

  it("shows the person, saves the default currency and rotates the postback key once", {
    timeout: 150_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.getByRole("link", { name: "Settings" }).click();
      await page.getByRole("heading", { name: "Settings", level: 1 }).waitFor({ timeout: WAIT_MS });
      const me = (await t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: who.bearer } })).json()
        .data as { name: string; email: string; permissions: string[] };
      const you = page.getByRole("region", { name: "You" });
      await you.getByText(me.email).waitFor({ timeout: WAIT_MS });
      expect(await you.textContent()).toContain(me.name);
      const chips = await you.getByRole("list", { name: "Your permissions" }).getByRole("listitem").allTextContents();
      expect(chips).toEqual(me.permissions);

      const before = await settings();
      const currency = page.getByLabel("Currency code");
      await expect.poll(() => currency.inputValue(), { timeout: WAIT_MS }).toBe(before.defaultCurrency);
      expect(await page.locator(".template").textContent()).toBe(before.postbackUrlTemplate);
      // The key itself is nowhere until a rotation hands out a new one.
      expect(await documentText(page)).not.toContain(who.postbackKey);
      await screenshot(page, "settings-01-page");
      await expectAccessible(page);

      // Not a currency: the API's message beside the field, nothing saved.
      await currency.fill("XYZ");
      await page.getByRole("button", { name: "Save" }).click();
      const refused = await t.call({
        method: "PATCH",
        url: "/api/v1/settings",
        headers: { authorization: who.bearer },
        payload: { defaultCurrency: "XYZ" },
      });
      expect(refused.statusCode).toBe(400);
      await expect.poll(() => currency.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const described = String(await currency.getAttribute("aria-describedby")).split(" ");
      expect(await page.locator(`[id="${described.at(-1)}"]`).textContent()).toBe(
        refused.json().data.errors[0].message,
      );
      expect((await settings()).defaultCurrency).toBe(before.defaultCurrency);
      await screenshot(page, "settings-02-refused");
      await expectAccessible(page);

      // A currency in any case: saved, read back through the API, and shown after a reload.
      await currency.fill("eur");
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByText(/Saved: conversion values without a currency are now recorded in EUR/).waitFor({
        timeout: WAIT_MS,
      });
      expect((await settings()).defaultCurrency).toBe("EUR");
      await page.reload();
      await expect.poll(() => page.getByLabel("Currency code").inputValue(), { timeout: WAIT_MS }).toBe("EUR");

      // Rotation asks first; the new key works, the old one no longer does.
      await page.getByRole("button", { name: "Rotate postback key" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.waitFor({ timeout: WAIT_MS });
      expect(await dialog.textContent()).toContain("stops working at once");
      await screenshot(page, "settings-03-confirm-rotate");
      await expectAccessible(page);
      await dialog.getByRole("button", { name: "Rotate postback key" }).click();
      const shown = page.getByTestId("secret-value");
      await shown.waitFor({ timeout: WAIT_MS });
      const key = String(await shown.textContent());
      expect(key).not.toBe(who.postbackKey);
      expect(await page.locator(".rotated-url code").textContent()).toContain(`/postback/${key}?`);
      await screenshot(page, "settings-04-rotated");
      await expectAccessible(page);
      const oldKey = await t.call({ method: "GET", url: `/postback/${who.postbackKey}?clickId=x` });
      const newKey = await t.call({ method: "GET", url: `/postback/${key}?clickId=x` });
      expect(oldKey.statusCode).toBe(404);
      expect(oldKey.body).toContain("Unknown postback key");
      expect(newKey.body).not.toContain("Unknown postback key");

      await page.getByRole("button", { name: "I have copied it" }).click();
      await shown.waitFor({ state: "detached", timeout: WAIT_MS });
      expect(await documentText(page)).not.toContain(key);
      await page.getByRole("button", { name: "Rotate postback key" }).waitFor({ timeout: WAIT_MS });

      dropRefusals(log, 400, "/api/v1/settings");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("shows a person without account.admin who they are, and nothing to change", { timeout: 90_000 }, async () => {
    const { email, password } = await addPerson(t, who.tenantId, { name: "Reader", permissions: ["reports.read"] });
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, { email, password });
      await page.getByRole("link", { name: "Settings" }).click();
      const you = page.getByRole("region", { name: "You" });
      await you.getByText(email).waitFor({ timeout: WAIT_MS });
      expect(await you.getByRole("list", { name: "Your permissions" }).getByRole("listitem").allTextContents()).toEqual(
        ["reports.read"],
      );
      await page.getByText("The account's settings are managed by account admins").waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("button", { name: "Save" }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Rotate postback key" }).count()).toBe(0);
      await screenshot(page, "settings-05-reader");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
