import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia, seedCatalog } from "./helpers/catalog.js";
import { hasChromium, launchChromium } from "./helpers/chromium.js";
import {
  expectAccessible,
  expectClean,
  openDashboardPage,
  pickFromPicker,
  screenshot,
  seriousViolations,
  signIn,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// The searchable pickers (report filters, link generator, webhook source) on a tenant with more
// rows than the API's largest page: the newest row, beyond the first 500, is found by typing.

const MANY = 520;

describe.skipIf(!hasChromium)("dashboard searchable pickers", () => {
  let t: TestApp;
  let who: Tenancy;
  let fixture: CatalogFixture;
  let browser: Browser;
  let origin: string;
  const newest = { link: 0, source: 0, tracker: 0, brand: 0, program: 0 };

  beforeAll(async () => {
    t = await startTestApp();
    who = await seedTenancy(t);
    fixture = await seedCatalog(t, who);
    // Many rows at once (trackers are made by clicks, so tenants have thousands), then the newest
    // through the API.
    const now = t.clock.now();
    await t.ctx.db.query(
      `insert into links (tenant_id, account_id, brand_id, name, url, created_at, updated_at)
       select $1, $2, $3, 'bulk link ' || n, 'https://brand.example/?c={clickId}', $4, $4 from generate_series(1, $5::int) n`,
      [who.tenantId, fixture.accountId, fixture.brandId, now, MANY],
    );
    await t.ctx.db.query(
      `insert into traffic_sources (tenant_id, name, created_at, updated_at)
       select $1, 'bulk source ' || n, $2, $2 from generate_series(1, $3::int) n`,
      [who.tenantId, now, MANY],
    );
    await t.ctx.db.query(
      `insert into trackers (tenant_id, name, created_at, updated_at)
       select $1, 'bulk-tracker-' || n, $2, $2 from generate_series(1, $3::int) n`,
      [who.tenantId, now, MANY],
    );
    await t.ctx.db.query(
      `insert into brands (tenant_id, name, created_at, updated_at)
       select $1, 'bulk brand ' || n, $2, $2 from generate_series(1, $3::int) n`,
      [who.tenantId, now, MANY],
    );
    newest.brand = await createVia(t, who, "brands", { name: "Zephyr Slots" });
    // Same link name in two accounts: only the brand and account tell them apart.
    const brand = await createVia(t, who, "brands", { name: "Nova Casino" });
    const program = await createVia(t, who, "programs", { name: "Nova partners", brandIds: [brand] });
    newest.program = program;
    const acme = await createVia(t, who, "accounts", { name: "Acme account", programId: program });
    const zen = await createVia(t, who, "accounts", { name: "Zen media", programId: program });
    const url = "https://nova.example/?c={clickId}";
    await createVia(t, who, "links", { name: "nova-bingo main", accountId: zen, brandId: brand, url });
    newest.link = await createVia(t, who, "links", { name: "nova-bingo main", accountId: acme, brandId: brand, url });
    newest.source = await createVia(t, who, "traffic-sources", { name: "Latest newsletter" });
    newest.tracker = await createVia(t, who, "trackers", { name: "latest-push" });
    origin = await t.app.listen({ port: 0, host: "127.0.0.1" });
    browser = await launchChromium();
  }, 120_000);

  afterAll(async () => {
    await browser?.close();
    await t?.close();
  });

  it("holds more rows than one page of the API", async () => {
    const links = await t.call({
      method: "GET",
      url: "/api/v1/links?limit=500",
      headers: { authorization: who.apiKey },
    });
    expect(links.json().pagination.total).toBeGreaterThan(500);
    expect(links.json().data.map((l: { id: number }) => l.id)).not.toContain(newest.link);
  });

  for (const viewport of [
    { name: "desktop", width: 1440, height: 900 },
    { name: "phone", width: 390, height: 844 },
  ]) {
    it(`finds the newest rows by typing, at ${viewport.width} px`, { timeout: 180_000 }, async () => {
      const { context, page, log } = await openDashboardPage(browser, origin);
      try {
        await page.setViewportSize({ width: viewport.width, height: viewport.height });
        await page.goto(`${origin}/sign-in`);
        await signIn(page, who);

        // The link generator: a brand link labelled with its brand and account.
        await page.goto(`${origin}/catalog/link-generator`);
        await page.getByRole("heading", { name: "Link generator", level: 1 }).waitFor({ timeout: WAIT_MS });
        const linkBox = page.getByRole("combobox", { name: "Brand link", exact: true });
        await linkBox.click();
        await linkBox.fill("nova-bingo");
        const options = page.getByRole("option", { name: /^nova-bingo main/ });
        await expect
          .poll(() => options.allTextContents(), { timeout: WAIT_MS })
          .toEqual(["nova-bingo main Nova Casino / Zen media", "nova-bingo main Nova Casino / Acme account"]);
        await screenshot(page, `pickers-01-link-options-${viewport.name}`);
        await expectAccessible(page);
        await page.getByRole("option", { name: "nova-bingo main Nova Casino / Acme account" }).click();
        await expect
          .poll(() => linkBox.inputValue(), { timeout: WAIT_MS })
          .toBe("nova-bingo main · Nova Casino / Acme account");
        await pickFromPicker(page, "Traffic source", "latest", "Latest newsletter");
        await pickFromPicker(page, "Tracker", "latest", "latest-push");
        await page.getByRole("button", { name: "Show tracking URL" }).click();
        await expect
          .poll(() => page.getByTestId("tracking-url").textContent(), { timeout: WAIT_MS })
          .toContain(`/go/${newest.link}/${newest.source}`);
        const address = new URL(page.url()).searchParams;
        expect([address.get("link"), address.get("source"), address.get("trackerId")]).toEqual(
          [newest.link, newest.source, newest.tracker].map(String),
        );
        // Reloaded, the chosen rows (beyond every page read) show their labels, read by id.
        await page.reload();
        await expect
          .poll(() => page.getByRole("combobox", { name: "Brand link", exact: true }).inputValue(), {
            timeout: WAIT_MS,
          })
          .toBe("nova-bingo main · Nova Casino / Acme account");
        await expect
          .poll(() => page.getByRole("combobox", { name: "Tracker", exact: true }).inputValue(), { timeout: WAIT_MS })
          .toBe("latest-push");
        await screenshot(page, `pickers-02-link-generator-${viewport.name}`);
        await expectAccessible(page);

        // Keyboard: type, arrow down to the match, Enter.
        const trackerBox = page.getByRole("combobox", { name: "Tracker", exact: true });
        await trackerBox.click();
        await trackerBox.fill("bulk-tracker-519");
        await page.getByRole("option", { name: "bulk-tracker-519", exact: true }).waitFor({ timeout: WAIT_MS });
        await trackerBox.press("ArrowDown");
        await trackerBox.press("ArrowDown");
        await trackerBox.press("ArrowDown");
        expect(await trackerBox.getAttribute("aria-activedescendant")).toBeTruthy();
        await trackerBox.press("Enter");
        await expect.poll(() => trackerBox.inputValue(), { timeout: WAIT_MS }).toBe("bulk-tracker-519");

        // "More matches" pages through a long list.
        await trackerBox.click();
        await trackerBox.fill("bulk");
        await page.getByText(`20 of ${MANY} shown`).waitFor({ timeout: WAIT_MS });
        await page.getByRole("button", { name: "More matches" }).click();
        await page.getByText(`40 of ${MANY} shown`).waitFor({ timeout: WAIT_MS });
        await trackerBox.press("Escape");
        expect(await trackerBox.inputValue()).toBe("bulk-tracker-519");

        // The report filters.
        await page.goto(`${origin}/reports`);
        await page.getByRole("heading", { name: "Filters" }).waitFor({ timeout: WAIT_MS });
        await pickFromPicker(page, "Link", "acme", "nova-bingo main Nova Casino / Acme account");
        await expect
          .poll(() => new URL(page.url()).searchParams.get("linkId"), { timeout: WAIT_MS })
          .toBe(String(newest.link));
        await pickFromPicker(page, "Tracker", "latest", "latest-push");
        await expect
          .poll(() => new URL(page.url()).searchParams.get("trackerId"), { timeout: WAIT_MS })
          .toBe(String(newest.tracker));
        await pickFromPicker(page, "Traffic source", "latest", "Latest newsletter");
        await expect
          .poll(() => new URL(page.url()).searchParams.get("trafficSourceId"), { timeout: WAIT_MS })
          .toBe(String(newest.source));
        await screenshot(page, `pickers-03-report-filters-${viewport.name}`);
        expect(await seriousViolations(page)).toEqual([]);
        // "Any" clears a filter.
        await pickFromPicker(page, "Tracker", "", "Any");
        await expect.poll(() => new URL(page.url()).searchParams.get("trackerId"), { timeout: WAIT_MS }).toBeNull();

        // The webhook source picker.
        await page.goto(`${origin}/webhooks/new`);
        await pickFromPicker(page, "Fires for", "latest", "Latest newsletter");
        expect(await page.getByRole("combobox", { name: "Fires for", exact: true }).inputValue()).toBe(
          "Latest newsletter",
        );
        await screenshot(page, `pickers-04-webhook-source-${viewport.name}`);
        await expectAccessible(page);
        // Nothing on the page is wider than the screen.
        expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(viewport.width);
        expectClean(log);
      } finally {
        await context.close();
      }
    });
  }

  it("lists a program's first 500 brands and finds any other by typing", { timeout: 180_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.goto(`${origin}/catalog/programs/${newest.program}`);
      const brands = page.getByRole("group", { name: "Brands" });
      await brands.getByRole("checkbox", { name: "Nova Casino" }).waitFor({ timeout: WAIT_MS });
      expect(await brands.getByRole("checkbox").count()).toBe(501);
      expect(await brands.getByRole("checkbox", { name: "Zephyr Slots" }).count()).toBe(0);
      await brands.getByText(/The first 500 of 52\d brands are listed; find any other below/).waitFor();
      await pickFromPicker(page, "Add a brand not listed", "Zephyr", "Zephyr Slots");
      const added = brands.getByRole("checkbox", { name: "Zephyr Slots" });
      await added.waitFor({ timeout: WAIT_MS });
      expect(await added.isChecked()).toBe(true);
      await screenshot(page, "pickers-05-program-brand-beyond-500");
      await expectAccessible(page);
      await page.getByRole("button", { name: /^Save/ }).click();
      await expect
        .poll(
          async () => {
            const res = await t.call({
              method: "GET",
              url: `/api/v1/programs/${newest.program}`,
              headers: { authorization: who.apiKey },
            });
            return res.json().data.brandIds;
          },
          { timeout: WAIT_MS },
        )
        .toContain(newest.brand);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
