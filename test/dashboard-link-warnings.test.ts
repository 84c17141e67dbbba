import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tenancy, TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia, seedCatalog } from "./helpers/catalog.js";
import { hasChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  startDashboard,
  stopDashboard,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// What the catalog says to the person setting up tracking, in Chromium: a brand link saved without
// {clickId} gets the API's warning that its conversions cannot be tied to clicks, and the link
// generator's URL carries the traffic source's click-id macro so its postback can bring it back.

describe.skipIf(!hasChromium)("dashboard: brand link warning and the source's click-id macro", () => {
  let t: TestApp;
  let who: Tenancy;
  let cat: CatalogFixture;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    ({ t, who, browser, origin } = await startDashboard(async (app, tenancy) => {
      cat = await seedCatalog(app, tenancy);
    }));
  }, 120_000);

  afterAll(() => stopDashboard({ t, browser }));

  it("shows the warning of a brand link without {clickId} and the macro in a generated URL", {
    timeout: 180_000,
  }, async () => {
    const sourceId = await createVia(t, who, "traffic-sources", {
      name: "Macro Net",
      clickIdParam: "zoneClick",
      clickIdMacro: "{ClickID}",
    });
    // The warning as the API words it, for the same URL.
    const created = await t.call({
      method: "POST",
      url: "/api/v1/links",
      headers: { authorization: who.apiKey },
      payload: { name: "No click id", accountId: cat.accountId, brandId: cat.brandId, url: "https://brand.example/x" },
    });
    expect(created.statusCode, created.body).toBe(201);
    const warning = (created.json().data.warnings as { message: string }[])[0]?.message ?? "";
    expect(warning).toContain("{clickId}");
    const linkId = created.json().data.id as number;

    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/catalog/links/${linkId}`);
      await page.getByLabel("Email").fill(who.email);
      await page.getByLabel("Password").fill(who.password);
      await page.getByRole("button", { name: "Sign in" }).click();
      const name = page.getByLabel("Name", { exact: true });
      await name.waitFor({ timeout: WAIT_MS });
      // Saved again from the form: the warning stays in view with the saved record.
      const shown = page.getByRole("status").filter({ hasText: "Saved, with a warning" });
      await shown.waitFor({ timeout: WAIT_MS });
      await name.fill("No click id, renamed");
      await page.getByRole("button", { name: /^Save/ }).click();
      // Saved: the record's new name in the trail, the form still open on the warning.
      await page.getByText("Brand links / No click id, renamed").waitFor({ timeout: WAIT_MS });
      await page.getByRole("button", { name: "Saving…" }).waitFor({ state: "detached", timeout: WAIT_MS });
      await shown.waitFor({ timeout: WAIT_MS });
      expect(await shown.textContent()).toContain(warning);
      await screenshot(page, "link-warning-01-saved");
      await expectAccessible(page);

      // The generator: the source's <clickIdParam>=<clickIdMacro> in the URL to publish.
      await page.goto(`${origin}/catalog/link-generator?link=${cat.linkId}&source=${sourceId}`);
      const url = page.getByTestId("tracking-url");
      await url.waitFor({ timeout: WAIT_MS });
      expect(await url.textContent()).toMatch(new RegExp(`/go/${cat.linkId}/${sourceId}\\?zoneClick=\\{ClickID\\}$`));
      await screenshot(page, "link-warning-02-generator-macro");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
