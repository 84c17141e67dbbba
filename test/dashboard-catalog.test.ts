import type { Browser, Page } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { withLabel } from "../web/src/components/field-message.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia, seedCatalog } from "./helpers/catalog.js";
import { hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  dropRefusals,
  expectAccessible,
  expectClean,
  openDashboardPage,
  pickFromPicker,
  screenshot,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// The catalog pages end to end: the real service on loopback, real Chromium. Rows are seeded
// and checked through the API, as a third-party client would.

const LISTS = [
  { key: "brands", heading: "Brands", seeded: "Brand" },
  { key: "programs", heading: "Programs", seeded: "Program" },
  { key: "accounts", heading: "Accounts", seeded: "Account" },
  { key: "links", heading: "Brand links", seeded: "Link" },
  { key: "traffic-sources", heading: "Traffic sources", seeded: "Source" },
  { key: "trackers", heading: "Trackers", seeded: "summer-sale" },
] as const;

/** Signs in on the form the app shows for `path`, and waits for that page's heading. */
async function signInTo(page: Page, origin: string, who: Tenancy, path: string, heading: string): Promise<void> {
  await page.goto(`${origin}${path}`);
  await page.getByLabel("Email").fill(who.email);
  await page.getByLabel("Password").fill(who.password);
  await page.getByRole("button", { name: "Sign in" }).click();
  await page.getByRole("heading", { name: heading, level: 1 }).waitFor({ timeout: WAIT_MS });
}

async function apiGet(t: TestApp, who: Tenancy, url: string) {
  return t.call({ method: "GET", url, headers: { authorization: who.apiKey } });
}

/** The API's own message for a refused body: what the page must show next to the field. */
async function apiRefusal(t: TestApp, who: Tenancy, path: string, payload: object, field: string): Promise<string> {
  const res = await t.call({ method: "POST", url: `/api/v1/${path}`, headers: { authorization: who.apiKey }, payload });
  expect(res.statusCode).toBe(400);
  const error = (res.json().data.errors as { path: string; message: string }[]).find((e) => e.path === field);
  if (!error) throw new Error(`no error for ${field}: ${res.body}`);
  return error.message;
}

/** The error shown in the same field as the control labelled `label`, tied to it for screen readers. */
async function fieldErrorOf(page: Page, label: string): Promise<string> {
  const control = page.getByLabel(label, { exact: true });
  await expect.poll(() => control.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
  const describedBy = String(await control.getAttribute("aria-describedby"));
  const errorId = describedBy.split(" ").find((id) => id.endsWith("-error"));
  const error = page.locator(`[id="${errorId}"]`);
  // The message sits inside the same field wrapper as the control.
  const controlId = String(await control.getAttribute("id"));
  expect(await error.evaluate((el, id) => el.parentElement?.contains(document.getElementById(id)), controlId)).toBe(
    true,
  );
  return String(await error.textContent());
}

describe.skipIf(!hasChromium)("dashboard catalog", () => {
  let t: TestApp;
  let admin: Tenancy;
  let fixture: CatalogFixture;
  let trackerId: number;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    t = await startTestApp();
    // traffic-sources.delete is granted on its own (account.admin does not imply it).
    admin = await seedTenancy(t, { permissions: ["account.admin", "traffic-sources.delete"] });
    fixture = await seedCatalog(t, admin);
    trackerId = await createVia(t, admin, "trackers", { name: "summer-sale" });
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("lists every catalog list with the API's rows, counts, search and paging", { timeout: 180_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await signInTo(page, origin, admin, "/catalog", "Catalog");
      for (const list of LISTS) {
        const total = (await apiGet(t, admin, `/api/v1/${list.key}?limit=1`)).json().pagination?.total;
        await expect
          .poll(() => page.locator(`[data-entity="${list.key}"] .catalog-count`).getAttribute("data-count"), {
            timeout: WAIT_MS,
          })
          .toBe(String(total));
      }
      await screenshot(page, "catalog-01-home");
      await expectAccessible(page);

      for (const [index, list] of LISTS.entries()) {
        await page
          .getByRole("navigation", { name: "Catalog sections" })
          .getByRole("link", { name: list.heading })
          .click();
        await page.getByRole("heading", { name: list.heading, level: 1 }).waitFor({ timeout: WAIT_MS });
        expect(new URL(page.url()).pathname).toBe(`/catalog/${list.key}`);
        const table = page.getByRole("table", { name: list.heading });
        await table.getByRole("cell", { name: list.seeded, exact: true }).waitFor({ timeout: WAIT_MS });
        await screenshot(page, `catalog-${String(index + 2).padStart(2, "0")}-${list.key}`);
        await expectAccessible(page);
      }
      // Pointers read as the API's names: the brand link's account and brand.
      await page.getByRole("link", { name: "Brand links", exact: true }).click();
      const row = page.getByRole("row").filter({ hasText: "brand.example" });
      await row.waitFor({ timeout: WAIT_MS });
      expect(await row.getByRole("cell", { name: "Account", exact: true }).count()).toBe(1);
      expect(await row.getByRole("cell", { name: "Brand", exact: true }).count()).toBe(1);

      // Paging: 28 trackers, 25 a page; the offset is in the address.
      for (let i = 1; i <= 27; i += 1)
        await createVia(t, admin, "trackers", { name: `placement-${String(i).padStart(2, "0")}` });
      await page.goto(`${origin}/catalog/trackers`);
      const pager = page.getByRole("navigation", { name: "Trackers pages" });
      await pager.getByText("1–25 of 28").waitFor({ timeout: WAIT_MS });
      await pager.getByRole("button", { name: "Next" }).click();
      await pager.getByText("26–28 of 28").waitFor({ timeout: WAIT_MS });
      expect(new URL(page.url()).searchParams.get("offset")).toBe("25");
      const apiPage = (await apiGet(t, admin, "/api/v1/trackers?offset=25&limit=25")).json().data as { name: string }[];
      const shownNames = await page.locator("tbody tr td:nth-child(2)").allTextContents();
      expect(shownNames).toEqual(apiPage.map((r) => r.name));
      await screenshot(page, "catalog-08-trackers-page-2");

      // Search: a shared address shows the same narrowed list.
      await page.getByLabel("Search trackers").fill("PLACEMENT-1");
      await page.getByRole("button", { name: "Search" }).click();
      await page.waitForURL((url) => url.searchParams.get("search") === "PLACEMENT-1");
      const searched = (await apiGet(t, admin, "/api/v1/trackers?search=PLACEMENT-1")).json().data as {
        name: string;
      }[];
      await expect
        .poll(() => page.locator("tbody tr td:nth-child(2)").allTextContents(), { timeout: WAIT_MS })
        .toEqual(searched.map((r) => r.name));
      expect(searched).toHaveLength(10);
      await page.goto(`${origin}/catalog/trackers?search=nothing-like-this`);
      await page.getByText("No trackers match.").waitFor({ timeout: WAIT_MS });
      await screenshot(page, "catalog-09-search-empty");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("creates a brand and a program under it, edits and deletes with confirmation", { timeout: 180_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400, 409] });
    try {
      await signInTo(page, origin, admin, "/catalog/brands", "Brands");
      await page.getByRole("link", { name: "New brand" }).click();
      await page.getByRole("heading", { name: "New brand", level: 1 }).waitFor({ timeout: WAIT_MS });

      // An empty name: the API refuses it, and its message stands next to the field.
      await page.getByRole("button", { name: "Create brand" }).click();
      expect(await fieldErrorOf(page, "Name")).toBe(
        withLabel("Name", await apiRefusal(t, admin, "brands", { name: "" }, "name")),
      );
      await screenshot(page, "catalog-10-brand-refused");
      await expectAccessible(page);
      // Too long, too.
      await page.getByLabel("Name", { exact: true }).fill("x".repeat(201));
      await page.getByRole("button", { name: "Create brand" }).click();
      const tooLong = await apiRefusal(t, admin, "brands", { name: "x".repeat(201) }, "name");
      await expect.poll(() => fieldErrorOf(page, "Name"), { timeout: WAIT_MS }).toBe(withLabel("Name", tooLong));

      await page.getByLabel("Name", { exact: true }).fill("Acme");
      await page.getByRole("button", { name: "Create brand" }).click();
      await page.getByRole("heading", { name: "Brands", level: 1 }).waitFor({ timeout: WAIT_MS });
      await page.getByRole("cell", { name: "Acme", exact: true }).waitFor({ timeout: WAIT_MS });
      const brands = (await apiGet(t, admin, "/api/v1/brands?search=acme")).json().data as {
        id: number;
        name: string;
      }[];
      expect(brands.map((b) => b.name)).toEqual(["Acme"]);
      const acmeId = brands[0]?.id;

      // The brand's programs, then a new one there: it offers the brand already.
      await page.getByRole("link", { name: "Programs of Acme" }).click();
      await page.getByRole("heading", { name: "Programs", level: 1 }).waitFor({ timeout: WAIT_MS });
      expect(new URL(page.url()).searchParams.get("brandId")).toBe(String(acmeId));
      await page.getByText("No programs match.").waitFor({ timeout: WAIT_MS });
      await page.getByRole("link", { name: "New program" }).click();
      await page.getByRole("heading", { name: "New program", level: 1 }).waitFor({ timeout: WAIT_MS });
      const acmeBox = page.getByRole("group", { name: "Brands" }).getByRole("checkbox", { name: "Acme" });
      await acmeBox.waitFor({ timeout: WAIT_MS });
      expect(await acmeBox.isChecked()).toBe(true);
      await page.getByLabel("Name", { exact: true }).fill("Acme Partners");
      await screenshot(page, "catalog-11-program-new");
      await expectAccessible(page);
      await page.getByRole("button", { name: "Create program" }).click();
      await page.getByRole("heading", { name: "Programs", level: 1 }).waitFor({ timeout: WAIT_MS });
      await page.getByRole("cell", { name: "Acme Partners", exact: true }).waitFor({ timeout: WAIT_MS });
      const programs = (await apiGet(t, admin, `/api/v1/programs?brandId=${acmeId}`)).json().data as {
        id: number;
        name: string;
        brandIds: number[];
      }[];
      expect(programs.map((p) => [p.name, p.brandIds])).toEqual([["Acme Partners", [acmeId]]]);
      const programId = programs[0]?.id;

      // Edit: the name changes, on the page and in the API.
      await page.getByRole("link", { name: "Edit Acme Partners" }).click();
      await page.getByRole("heading", { name: "Edit program", level: 1 }).waitFor({ timeout: WAIT_MS });
      await expect
        .poll(() => page.getByLabel("Name", { exact: true }).inputValue(), { timeout: WAIT_MS })
        .toBe("Acme Partners");
      await page.getByLabel("Name", { exact: true }).fill("Acme Partners EU");
      await screenshot(page, "catalog-12-program-edit");
      await expectAccessible(page);
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByRole("cell", { name: "Acme Partners EU", exact: true }).waitFor({ timeout: WAIT_MS });
      expect((await apiGet(t, admin, `/api/v1/programs/${programId}`)).json().data.name).toBe("Acme Partners EU");
      // Back on the brand's programs, as the list was left.
      expect(new URL(page.url()).searchParams.get("brandId")).toBe(String(acmeId));

      // The brand is still offered by the program: the API refuses, and the page says why.
      await page.goto(`${origin}/catalog/brands?search=acme`);
      const acmeRow = page.getByRole("row").filter({ hasText: "Acme" });
      await acmeRow.getByRole("button", { name: "Delete" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.waitFor({ timeout: WAIT_MS });
      expect(await dialog.textContent()).toContain("Delete the brand Acme?");
      await screenshot(page, "catalog-13-delete-confirm");
      await expectAccessible(page);
      await dialog.getByRole("button", { name: "Delete" }).click();
      const refusal = await t.call({
        method: "DELETE",
        url: `/api/v1/brands/${acmeId}`,
        headers: { authorization: admin.apiKey },
      });
      expect(refusal.statusCode).toBe(409);
      await acmeRow.getByRole("alert").getByText(refusal.json().message).waitFor({ timeout: WAIT_MS });
      await screenshot(page, "catalog-14-delete-refused");

      // Delete the program: Cancel first keeps it; confirming deletes it.
      await page.goto(`${origin}/catalog/programs?brandId=${acmeId}`);
      const programRow = page.getByRole("row").filter({ hasText: "Acme Partners EU" });
      await programRow.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Cancel" }).click();
      await expect.poll(() => page.getByRole("dialog").count()).toBe(0);
      expect((await apiGet(t, admin, `/api/v1/programs/${programId}`)).statusCode).toBe(200);
      await programRow.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
      await page.getByText("No programs match.").waitFor({ timeout: WAIT_MS });
      expect((await apiGet(t, admin, `/api/v1/programs/${programId}`)).statusCode).toBe(404);

      // Now the brand goes, from its edit page.
      await page.goto(`${origin}/catalog/brands/${acmeId}`);
      await page.getByRole("heading", { name: "Edit brand", level: 1 }).waitFor({ timeout: WAIT_MS });
      await page.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
      await page.getByRole("heading", { name: "Brands", level: 1 }).waitFor({ timeout: WAIT_MS });
      expect((await apiGet(t, admin, `/api/v1/brands/${acmeId}`)).statusCode).toBe(404);

      // A traffic source (its own delete permission, which this person holds).
      const sourceId = await createVia(t, admin, "traffic-sources", { name: "Newsletter" });
      await page.goto(`${origin}/catalog/traffic-sources`);
      const sourceRow = page.getByRole("row").filter({ hasText: "Newsletter" });
      await sourceRow.getByRole("button", { name: "Delete" }).click();
      await page.getByRole("dialog").getByRole("button", { name: "Delete" }).click();
      await expect.poll(() => sourceRow.count(), { timeout: WAIT_MS }).toBe(0);
      expect((await apiGet(t, admin, `/api/v1/traffic-sources/${sourceId}`)).statusCode).toBe(404);

      // A tracker of digits only: the API's reason, next to the field.
      await page.goto(`${origin}/catalog/trackers/new`);
      await page.getByLabel("Name", { exact: true }).fill("123456");
      await page.getByRole("button", { name: "Create tracker" }).click();
      expect(await fieldErrorOf(page, "Name")).toBe(
        withLabel("Name", await apiRefusal(t, admin, "trackers", { name: "123456" }, "name")),
      );
      await screenshot(page, "catalog-15-tracker-refused");
      await expectAccessible(page);

      dropRefusals(log, 400, "/api/v1/brands");
      dropRefusals(log, 400, "/api/v1/trackers");
      dropRefusals(log, 409, `/api/v1/brands/${acmeId}`);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("offers no change to a person without catalog.update", { timeout: 120_000 }, async () => {
    const reader = await seedTenancy(t, { permissions: ["catalog.read"] });
    await seedCatalog(t, reader);
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await signInTo(page, origin, reader, "/catalog/brands", "Brands");
      await page.getByRole("cell", { name: "Brand", exact: true }).waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("link", { name: "New brand" }).count()).toBe(0);
      expect(await page.getByRole("columnheader", { name: "Actions" }).count()).toBe(0);
      expect(await page.getByRole("link", { name: /^Edit/ }).count()).toBe(0);
      expect(await page.getByRole("button", { name: "Delete" }).count()).toBe(0);
      await screenshot(page, "catalog-16-reader-brands");
      await expectAccessible(page);
      // The form's address still says what is missing, and offers no form.
      await page.goto(`${origin}/catalog/brands/new`);
      await page.getByText("Changing the catalog needs the catalog.update permission").waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("button", { name: "Create brand" }).count()).toBe(0);
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }

    // account.admin without traffic-sources.delete: traffic sources can be edited, not deleted.
    const editor = await seedTenancy(t, { permissions: ["account.admin"] });
    await seedCatalog(t, editor);
    const second = await openDashboardPage(browser, origin);
    try {
      await signInTo(second.page, origin, editor, "/catalog/traffic-sources", "Traffic sources");
      await second.page.getByRole("link", { name: "Edit Source" }).waitFor({ timeout: WAIT_MS });
      expect(await second.page.getByRole("button", { name: "Delete" }).count()).toBe(0);
      await second.page.goto(`${origin}/catalog/brands`);
      await second.page.getByRole("link", { name: "Edit Brand" }).waitFor({ timeout: WAIT_MS });
      expect(await second.page.getByRole("button", { name: "Delete" }).count()).toBe(1);
      expectClean(second.log);
    } finally {
      await second.context.close();
    }
  });

  it("generates the API's tracking URL and copies it", { timeout: 120_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
    await context.grantPermissions(["clipboard-read", "clipboard-write"], { origin });
    try {
      await signInTo(page, origin, admin, "/catalog/link-generator", "Link generator");
      await pickFromPicker(page, "Brand link", "Link", "Link Brand / Account");
      await pickFromPicker(page, "Traffic source", "sour", "Source");
      await pickFromPicker(page, "Tracker", "summer", "summer-sale");
      await page.getByRole("button", { name: "Show tracking URL" }).click();
      const answer = await apiGet(
        t,
        admin,
        `/api/v1/link-generator/router/brand-link/${fixture.linkId}/traffic-source/${fixture.trafficSourceId}/url?tracker=${trackerId}`,
      );
      const expected = answer.json().data.url as string;
      const shown = page.getByTestId("tracking-url");
      await expect.poll(() => shown.textContent(), { timeout: WAIT_MS }).toBe(expected);
      expect(expected).toContain(`tracker=${trackerId}`);
      // The choice is in the address: shareable.
      const url = new URL(page.url());
      expect(url.searchParams.get("link")).toBe(String(fixture.linkId));
      expect(url.searchParams.get("trackerId")).toBe(String(trackerId));

      await page.getByRole("button", { name: "Copy URL" }).click();
      await page.getByText("Copied.").waitFor({ timeout: WAIT_MS });
      expect(await page.evaluate(() => navigator.clipboard.readText())).toBe(expected);
      await screenshot(page, "catalog-17-link-generator");
      await expectAccessible(page);

      // A new tracker name the API refuses: its message next to the name.
      await pickFromPicker(page, "Tracker", "", "A new tracker…");
      await page.getByLabel("New tracker name").fill("ab");
      await page.getByRole("button", { name: "Show tracking URL" }).click();
      const refused = await apiGet(
        t,
        admin,
        `/api/v1/link-generator/router/brand-link/${fixture.linkId}/traffic-source/${fixture.trafficSourceId}/url?tracker=ab`,
      );
      expect(refused.statusCode).toBe(400);
      const message = (refused.json().data.errors as { path: string; message: string }[])[0]?.message;
      expect(await fieldErrorOf(page, "New tracker name")).toBe(withLabel("New tracker name", String(message)));
      await screenshot(page, "catalog-18-link-generator-refused");
      await expectAccessible(page);

      // A new one it accepts: the URL carries it, and the page says it is new.
      await page.getByLabel("New tracker name").fill("Spring-Promo");
      await page.getByRole("button", { name: "Show tracking URL" }).click();
      const fresh = await apiGet(
        t,
        admin,
        `/api/v1/link-generator/router/brand-link/${fixture.linkId}/traffic-source/${fixture.trafficSourceId}/url?tracker=Spring-Promo`,
      );
      await expect.poll(() => shown.textContent(), { timeout: WAIT_MS }).toBe(fresh.json().data.url);
      await page.getByText("Tracker 'spring-promo' is new").waitFor({ timeout: WAIT_MS });
      dropRefusals(log, 400, "/api/v1/link-generator/");
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
