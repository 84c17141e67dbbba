import type { Browser } from "playwright-core";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Tenancy, TestApp } from "./helpers/app.js";
import { hasChromium } from "./helpers/chromium.js";
import {
  addPerson,
  expectAccessible,
  expectClean,
  openDashboardPage,
  screenshot,
  signIn,
  startDashboard,
  stopDashboard,
  WAIT_MS,
} from "./helpers/dashboard-browser.js";

// The MCP page end to end: what GET /api/v1/mcp answers, on screen; a key for MCP created from
// it that the MCP endpoint then takes; the service's health and build for account admins only.

describe.skipIf(!hasChromium)("dashboard: MCP page", () => {
  let t: TestApp;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    ({ t, who, browser, origin } = await startDashboard());
  }, 120_000);

  afterAll(() => stopDashboard({ t, browser }));

  it("shows the endpoint, a client configuration, the scopes and tools, and creates a key the endpoint takes", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.getByRole("link", { name: "MCP", exact: true }).click();
      await page.getByRole("heading", { name: "MCP", level: 1 }).waitFor({ timeout: WAIT_MS });

      const answer = await t.call({ method: "GET", url: "/api/v1/mcp", headers: { authorization: who.bearer } });
      expect(answer.statusCode).toBe(200);
      const connection = answer.json().data as { path: string; scopes: string[]; tools: { name: string }[] };
      expect(connection.path).toBe("/mcp");
      expect(connection.tools.map((tool) => tool.name)).toEqual(["list_reports", "describe_report", "run_report"]);

      const address = page.locator(".mcp-address");
      await address.waitFor({ timeout: WAIT_MS });
      expect(await address.textContent()).toBe(`${origin}/mcp`);
      const snippet = JSON.parse(String(await page.locator(".mcp-snippet").textContent()));
      expect(snippet.mcpServers["tracking-platform"]).toEqual({
        type: "http",
        url: `${origin}/mcp`,
        headers: { Authorization: "ApiKey <key>" },
      });
      for (const scope of connection.scopes) expect(await page.locator("code", { hasText: scope }).count()).toBe(1);
      for (const tool of connection.tools) await page.locator("dt code", { hasText: tool.name }).waitFor();

      // For an account admin: health part by part, and the build.
      const service = page.getByRole("region", { name: "Service" });
      await service.getByText("Version").waitFor({ timeout: WAIT_MS });
      await service.getByText("database").waitFor({ timeout: WAIT_MS });
      await screenshot(page, "mcp-01-page");
      await expectAccessible(page);
      await page.setViewportSize({ width: 390, height: 844 });
      await screenshot(page, "mcp-02-page-390px");
      expect(await page.evaluate(() => document.documentElement.scrollWidth)).toBeLessThanOrEqual(390);
      await page.setViewportSize({ width: 1440, height: 900 });

      // The key for MCP: the form opens with the first scope checked, the key works on /mcp.
      await page.getByRole("link", { name: "Create a key for MCP" }).click();
      const checked = page.getByRole("checkbox", { name: String(connection.scopes[0]) });
      await checked.waitFor({ timeout: WAIT_MS });
      expect(await checked.isChecked()).toBe(true);
      await page.getByLabel("Name", { exact: true }).fill("Assistant key");
      await page.getByRole("button", { name: "Create key" }).click();
      const shown = page.getByTestId("secret-value");
      await shown.waitFor({ timeout: WAIT_MS });
      const key = String(await shown.textContent());
      const listed = await t.call({
        method: "POST",
        url: "/mcp",
        headers: {
          authorization: `ApiKey ${key}`,
          accept: "application/json, text/event-stream",
          "content-type": "application/json",
        },
        payload: {
          jsonrpc: "2.0",
          id: 1,
          method: "initialize",
          params: { protocolVersion: "2025-06-18", capabilities: {}, clientInfo: { name: "test", version: "1" } },
        },
      });
      expect(listed.statusCode).toBe(200);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("leaves the service's health out for a reader who is no admin", { timeout: 120_000 }, async () => {
    const reader = await addPerson(t, who.tenantId, { name: "Report reader", permissions: ["reports.read"] });
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, reader);
      // Opened by its address (a reload, a shared link): the page, not the MCP endpoint at /mcp.
      await page.goto(`${origin}/mcp-setup`);
      await page.locator(".mcp-address").waitFor({ timeout: WAIT_MS });
      await screenshot(page, "mcp-03-reader");
      expect(await page.getByRole("region", { name: "Service" }).count()).toBe(0);
      expect(await page.getByRole("link", { name: "Create a key for MCP" }).count()).toBe(0);
      await page.getByText("API keys are created by account admins").waitFor({ timeout: WAIT_MS });
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
