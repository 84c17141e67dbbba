import type { Browser, Locator } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withLabel } from "../web/src/components/field-message.js";
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

// The settings page end to end: what the person is and may do (GET /me), the default and
// reporting currencies saved through PATCH /settings, the postback key, shown only in the
// rotation's answer, and the exchange rates (GET and PUT /exchange-rates).

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
      // The default currency's own form: the reporting currency's has a Save of its own.
      const save = page.getByRole("form", { name: "Default currency" }).getByRole("button", { name: "Save" });
      await expect.poll(() => currency.inputValue(), { timeout: WAIT_MS }).toBe(before.defaultCurrency);
      expect(await page.locator(".template").textContent()).toBe(before.postbackUrlTemplate);
      // The key itself is nowhere until a rotation hands out a new one.
      expect(await documentText(page)).not.toContain(who.postbackKey);
      await screenshot(page, "settings-01-page");
      await expectAccessible(page);

      // Not a currency: the API's message beside the field, nothing saved.
      await currency.fill("XYZ");
      await save.click();
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
        withLabel("Currency code", refused.json().data.errors[0].message),
      );
      expect((await settings()).defaultCurrency).toBe(before.defaultCurrency);
      await screenshot(page, "settings-02-refused");
      await expectAccessible(page);

      // A currency in any case: saved, read back through the API, and shown after a reload.
      await currency.fill("eur");
      await save.click();
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

      // Again with a grace period: the replaced key works until the end shown, which can be ended now.
      await page.getByLabel("The current key keeps working for").selectOption("24");
      await page.getByRole("button", { name: "Rotate postback key" }).click();
      expect(await dialog.textContent()).toContain("keeps working for 24 hours");
      await dialog.getByRole("button", { name: "Rotate postback key" }).click();
      await shown.waitFor({ timeout: WAIT_MS });
      const graceKey = String(await shown.textContent());
      const previous = page.locator(".previous-key");
      await previous.waitFor({ timeout: WAIT_MS });
      const until = (await settings()).previousKeyValidUntil;
      expect(until).not.toBeNull();
      expect(await previous.textContent()).toContain("The previous postback key still works until");
      expect((await t.call({ method: "GET", url: `/postback/${key}?type=Signup` })).statusCode).toBe(201);
      await page.getByRole("button", { name: "I have copied it" }).click();
      await shown.waitFor({ state: "detached", timeout: WAIT_MS });
      await screenshot(page, "settings-04b-previous-key");
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "settings-04c-previous-key-390");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1024, height: 800 });
      await expectAccessible(page);
      await previous.getByRole("button", { name: "End it now" }).click();
      await dialog.getByRole("button", { name: "End it now" }).click();
      await previous.waitFor({ state: "detached", timeout: WAIT_MS });
      expect((await settings()).previousKeyValidUntil).toBeNull();
      expect((await t.call({ method: "GET", url: `/postback/${key}?type=Signup` })).statusCode).toBe(404);
      expect((await t.call({ method: "GET", url: `/postback/${graceKey}?type=Signup` })).statusCode).toBe(201);

      dropRefusals(log, 400, "/api/v1/settings");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("saves the reporting currency, and lists and adds exchange rates, with the API's refusals beside their fields", {
    timeout: 150_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
    /** The message a field's description carries (the API's, or the page's own check). */
    const messageOf = async (field: Locator) => {
      await expect.poll(() => field.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const described = String(await field.getAttribute("aria-describedby")).split(" ");
      return page.locator(`[id="${described.at(-1)}"]`).textContent();
    };
    const put = (payload: object) =>
      t.call({ method: "PUT", url: "/api/v1/exchange-rates", headers: { authorization: who.bearer }, payload });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.getByRole("link", { name: "Settings" }).click();
      const before = await settings();
      const form = page.getByRole("form", { name: "Reporting currency" });
      const field = form.getByLabel("Reporting currency");
      const save = form.getByRole("button", { name: "Save" });
      await field.waitFor({ timeout: WAIT_MS });
      // Unset, it follows the default currency: empty, and the hint says which that is.
      expect(before.reportingCurrency).toBe(before.defaultCurrency);
      expect(await field.inputValue()).toBe("");
      expect(await form.textContent()).toContain(`Empty: the default currency (${before.defaultCurrency})`);

      // Not a currency: the API's message beside the field, nothing saved.
      await field.fill("XYZ");
      await save.click();
      const refused = await t.call({
        method: "PATCH",
        url: "/api/v1/settings",
        headers: { authorization: who.bearer },
        payload: { reportingCurrency: "XYZ" },
      });
      expect(refused.statusCode).toBe(400);
      expect(await messageOf(field)).toBe(withLabel("Reporting currency", refused.json().data.errors[0].message));
      expect((await settings()).reportingCurrency).toBe(before.defaultCurrency);

      // Pounds, in any case: saved, and what the reports are in from then on.
      await field.fill("gbp");
      await save.click();
      await form.getByText("Saved: reports now show amounts in GBP.").waitFor({ timeout: WAIT_MS });
      expect((await settings()).reportingCurrency).toBe("GBP");
      await page.reload();
      await expect.poll(() => field.inputValue(), { timeout: WAIT_MS }).toBe("GBP");
      await page.getByRole("link", { name: "Reports" }).click();
      await expect
        .poll(() => page.locator(".report-window").textContent(), { timeout: WAIT_MS })
        .toContain("Amounts in: British Pound (GBP)");
      const picker = page.getByLabel("Currency", { exact: true });
      expect(await picker.locator("option:checked").textContent()).toBe("Reporting currency (GBP)");

      // Emptied: back to the default currency (null).
      await page.getByRole("link", { name: "Settings" }).click();
      await field.fill("");
      await save.click();
      await form
        .getByText(`Saved: reports now show amounts in ${before.defaultCurrency}, the default currency.`)
        .waitFor({ timeout: WAIT_MS });
      expect((await settings()).reportingCurrency).toBe(before.defaultCurrency);

      // The rates in force today, as the API lists them.
      const rates = page.getByRole("region", { name: "Exchange rates" });
      const table = rates.getByRole("table");
      const shownRates = () =>
        table
          .locator("tbody tr")
          .evaluateAll((trs) =>
            trs.map((tr) => Array.from(tr.querySelectorAll("td")).map((td) => (td.textContent ?? "").trim())),
          );
      const inForce = async () =>
        (await t.call({ method: "GET", url: "/api/v1/exchange-rates", headers: { authorization: who.bearer } })).json()
          .data as { date: string; rates: Record<string, number>; sources: Record<string, string> };
      const asShown = (answer: Awaited<ReturnType<typeof inForce>>) =>
        Object.entries(answer.rates).map(([code, rate]) => [
          `${code} ${new Intl.DisplayNames("en-US", { type: "currency" }).of(code)}`,
          new Intl.NumberFormat("en-US", { maximumFractionDigits: 10 }).format(rate),
          code === "EUR"
            ? "Base: always 1"
            : answer.sources[code] === "tenant"
              ? "This account's rate"
              : "ECB reference rate",
        ]);
      const today = await inForce();
      await expect.poll(shownRates, { timeout: WAIT_MS }).toEqual(asShown(today));
      const day = rates.getByLabel("Day");
      const code = rates.getByLabel("Currency", { exact: true });
      const rate = rates.getByLabel("Rate per 1 EUR");
      const add = rates.getByRole("button", { name: "Add rate" });
      expect(await day.inputValue()).toBe(today.date);

      // Nothing to send: said at once, beside each field.
      await add.click();
      expect(await messageOf(code)).toBe("Enter a currency code, such as JPY.");
      expect(await messageOf(rate)).toBe("Enter the rate: how many units of the currency 1 EUR buys.");

      // The API's refusals: EUR (always 1) beside the currency, a rate below zero beside the rate.
      await code.fill("EUR");
      await rate.fill("2");
      await add.click();
      const eur = await put({ date: today.date, rates: { EUR: 2 } });
      expect(eur.statusCode).toBe(400);
      expect(await messageOf(code)).toBe(withLabel("Currency", eur.json().data.errors[0].message));
      expect(await rate.getAttribute("aria-invalid")).toBeNull();
      await code.fill("jpy");
      await rate.fill("-5");
      await add.click();
      const negative = await put({ date: today.date, rates: { JPY: -5 } });
      expect(negative.statusCode).toBe(400);
      expect(await messageOf(rate)).toBe(withLabel("Rate per 1 EUR", negative.json().data.errors[0].message));
      expect(await code.getAttribute("aria-invalid")).toBeNull();
      await screenshot(page, "settings-06-rate-refused");
      await expectAccessible(page);

      // A rate of the tenant's own: saved for the day, listed as theirs.
      await rate.fill("160.5");
      await add.click();
      await rates.getByText(`Saved: 1 EUR = 160.5 JPY from ${today.date}.`).waitFor({ timeout: WAIT_MS });
      const after = await inForce();
      expect(after.rates.JPY).toBe(160.5);
      expect(after.sources.JPY).toBe("tenant");
      await expect.poll(shownRates, { timeout: WAIT_MS }).toEqual(asShown(after));
      await screenshot(page, "settings-07-rate-added");
      await expectAccessible(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "settings-08-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);

      dropRefusals(log, 400, "/api/v1/settings");
      dropRefusals(log, 400, "/api/v1/exchange-rates");
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("saves the account's time zone, shows the API's refusal beside it, and the reports follow it", {
    timeout: 150_000,
  }, async () => {
    // The browser's clock is in Tokyo: the form offers that zone.
    const { context, page, log } = await openDashboardPage(browser, origin, {
      expectedStatuses: [400],
      timezoneId: "Asia/Tokyo",
    });
    const patch = (payload: object) =>
      t.call({ method: "PATCH", url: "/api/v1/settings", headers: { authorization: who.bearer }, payload });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.getByRole("link", { name: "Settings" }).click();
      const form = page.getByRole("form", { name: "Time zone" });
      const field = form.getByLabel("Time zone");
      const save = form.getByRole("button", { name: "Save" });
      await field.waitFor({ timeout: WAIT_MS });
      expect((await settings()).timeZone).toBe("UTC");
      expect(await field.inputValue()).toBe("UTC");

      // Not a zone: the API's message beside the field, nothing saved.
      await field.fill("Mars/Base");
      await save.click();
      const refused = await patch({ timeZone: "Mars/Base" });
      expect(refused.statusCode).toBe(400);
      expect(refused.json().data.errors[0].path).toBe("timeZone");
      await expect.poll(() => field.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const described = String(await field.getAttribute("aria-describedby")).split(" ");
      expect(await page.locator(`[id="${described.at(-1)}"]`).textContent()).toBe(
        withLabel("Time zone", refused.json().data.errors[0].message),
      );
      expect((await settings()).timeZone).toBe("UTC");
      await page.setViewportSize({ width: 1280, height: 900 });
      await screenshot(page, "settings-09-time-zone-refused");
      await expectAccessible(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "settings-10-time-zone-refused-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      // The narrowest phone the dashboard is for: nothing runs off the page there either.
      await page.setViewportSize({ width: 360, height: 780 });
      await screenshot(page, "settings-10-time-zone-refused-360px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(360);
      await page.setViewportSize({ width: 1024, height: 800 });

      // This browser's zone, one click away.
      await form.getByRole("button", { name: "Use this browser's time zone (Asia/Tokyo)" }).click();
      expect(await field.inputValue()).toBe("Asia/Tokyo");

      // Any case: saved in the canonical spelling, which the field then shows.
      await field.fill("america/new_york");
      await save.click();
      await form.getByText("Saved: reports now read days in America/New_York.").waitFor({ timeout: WAIT_MS });
      expect(await field.inputValue()).toBe("America/New_York");
      expect((await settings()).timeZone).toBe("America/New_York");
      await page.setViewportSize({ width: 1280, height: 900 });
      await screenshot(page, "settings-11-time-zone-saved");
      await page.setViewportSize({ width: 1024, height: 800 });

      // The reports follow the setting: their picker shows it, every request names it.
      const asked = page.waitForRequest(
        (r) =>
          r.url().includes("/api/v1/reports/events/performance") &&
          new URL(r.url()).searchParams.get("timeZone") === "America/New_York",
        { timeout: WAIT_MS },
      );
      await page.getByRole("link", { name: "Reports" }).click();
      await asked;
      await expect
        .poll(() => page.getByLabel("Time zone", { exact: true }).inputValue(), { timeout: WAIT_MS })
        .toBe("America/New_York");
      await expect
        .poll(() => page.locator(".report-window").textContent(), { timeout: WAIT_MS })
        .toContain("Time zone: America/New_York");

      dropRefusals(log, 400, "/api/v1/settings");
      expectClean(log);
    } finally {
      await context.close();
      // Back to UTC: the other tests of this file read the default.
      expect((await patch({ timeZone: "UTC" })).statusCode).toBe(200);
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
      // The exchange rates reports convert with are theirs to read, not to change.
      await page.getByRole("region", { name: "Exchange rates" }).getByRole("table").waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("button", { name: "Add rate" }).count()).toBe(0);
      await screenshot(page, "settings-05-reader");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
