import type { Browser } from "playwright-core";
import { Webhook } from "standardwebhooks";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { emitNotification } from "../src/features/notifications/index.js";
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
import { type Received, type Receiver, startReceiver } from "./helpers/receiver.js";

// Operational webhooks end to end: registered in the browser to a real receiver on loopback,
// the signing secret read off the screen once and checked against what the service signs.

const BASE = "/api/v1/notifications/webhooks";

function headersOf(request: Received): Record<string, string> {
  return Object.fromEntries(
    Object.entries(request.headers).flatMap(([name, value]) => (typeof value === "string" ? [[name, value]] : [])),
  );
}

describe.skipIf(!hasChromium)("dashboard: operational webhooks", () => {
  let t: TestApp;
  let rx: Receiver;
  let who: Tenancy;
  let browser: Browser;
  let origin: string;

  beforeAll(async () => {
    rx = await startReceiver();
    ({ t, who, browser, origin } = await startDashboard(undefined, {
      env: { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_TIMEOUT_MS: "5000" },
    }));
  }, 120_000);

  afterAll(async () => {
    await stopDashboard({ t, browser });
    await rx?.close();
  });

  /** An issue opens on the tenant now, and the worker sends what is due. */
  async function announce(id: string): Promise<void> {
    t.clock.set(new Date());
    await t.ctx.db.transaction((tx) =>
      emitNotification(tx, who.tenantId, "issue.opened", { id, title: `Issue ${id}` }, t.clock.now()),
    );
    expect(await t.ctx.notifications.worker.tick()).toBe(1);
  }

  it("registers a webhook with its secret shown once, edits it, rotates the secret and shows deliveries", {
    timeout: 180_000,
  }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [400] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.getByRole("link", { name: "Operational webhooks" }).click();
      await page.getByText("No operational webhooks yet.").waitFor({ timeout: WAIT_MS });
      await screenshot(page, "notifications-01-empty");
      await expectAccessible(page);

      // A private address: the API's reason, beside the URL.
      await page.getByRole("button", { name: "Register a webhook" }).click();
      const url = page.getByLabel("URL", { exact: true });
      await url.fill("https://10.1.2.3/hooks");
      await page.getByRole("button", { name: "Register", exact: true }).click();
      const refusal = await t.call({
        method: "POST",
        url: BASE,
        headers: { authorization: who.bearer },
        payload: { url: "https://10.1.2.3/hooks" },
      });
      expect(refusal.statusCode).toBe(400);
      const reason = refusal.json().data.errors[0].message as string;
      await expect.poll(() => url.getAttribute("aria-invalid"), { timeout: WAIT_MS }).toBe("true");
      const described = String(await url.getAttribute("aria-describedby")).split(" ");
      expect(await page.locator(`[id="${described.at(-1)}"]`).textContent()).toBe(withLabel("URL", reason));
      await screenshot(page, "notifications-02-refused");
      await expectAccessible(page);

      // The loopback receiver, two event types.
      const target = `${rx.base}/ops-hook`;
      await url.fill(target);
      await page.getByLabel("Description").fill("Pager");
      await page.getByRole("checkbox", { name: /issue\.opened/ }).check();
      await page.getByRole("checkbox", { name: /issue\.closed/ }).check();
      await page.getByRole("button", { name: "Register", exact: true }).click();
      const shown = page.getByTestId("secret-value");
      await shown.waitFor({ timeout: WAIT_MS });
      const secret = String(await shown.textContent());
      expect(secret).toMatch(/^whsec_/);
      await page.getByRole("link", { name: target }).waitFor({ timeout: WAIT_MS });
      await screenshot(page, "notifications-03-registered");
      await expectAccessible(page);
      expect((await documentText(page)).split(secret).length - 1).toBe(1);

      const listed = await t.call({ method: "GET", url: BASE, headers: { authorization: who.bearer } });
      const hook = (listed.json().data as { id: string; url: string; events: string[]; description: string }[])[0];
      expect(hook).toMatchObject({ url: target, events: ["issue.opened", "issue.closed"], description: "Pager" });
      if (!hook) throw new Error("not registered");

      // What the service signs verifies with the secret the page showed.
      await announce("iss_first");
      const [first] = rx.at("/ops-hook");
      if (!first) throw new Error("nothing received");
      expect(new Webhook(secret).verify(first.body, headersOf(first))).toMatchObject({ type: "issue.opened" });

      await page.getByRole("button", { name: "I have copied it" }).click();
      await shown.waitFor({ state: "detached", timeout: WAIT_MS });
      expect(await documentText(page)).not.toContain(secret);

      // The webhook's page: registration and the delivered message.
      await page.getByRole("link", { name: target }).click();
      await page.getByRole("heading", { name: target, level: 1 }).waitFor({ timeout: WAIT_MS });
      const delivered = page.getByRole("row").filter({ hasText: "issue.opened" });
      await delivered.waitFor({ timeout: WAIT_MS });
      expect(await delivered.textContent()).toContain("Delivered");
      await delivered.getByRole("button", { name: /^Show details of msg_/ }).click();
      const details = page.getByRole("region", { name: /^Message msg_/ });
      await details.getByText(/iss_first/).waitFor({ timeout: WAIT_MS });
      expect(await details.textContent()).toContain("succeeded, HTTP 200");
      expect(await documentText(page)).not.toContain(secret);
      await screenshot(page, "notifications-04-webhook");
      await expectAccessible(page);

      // Filters live in the address.
      await page.getByLabel("Status").selectOption("Failed");
      await page.waitForURL((u) => u.searchParams.get("status") === "Failed");
      await page.getByText("No message matches these filters.").waitFor({ timeout: WAIT_MS });
      await page.reload();
      await page.getByText("No message matches these filters.").waitFor({ timeout: WAIT_MS });
      expect(await page.getByLabel("Status").inputValue()).toBe("Failed");
      await page.getByLabel("Status").selectOption("");
      await delivered.waitFor({ timeout: WAIT_MS });

      // Edit: saved, and the API answers the change.
      await page.getByRole("button", { name: "Edit" }).click();
      await page.getByLabel("Description").fill("Pager duty");
      await page.getByRole("checkbox", { name: /issue\.closed/ }).uncheck();
      await page.getByRole("button", { name: "Save" }).click();
      await page.getByText("Saved.").waitFor({ timeout: WAIT_MS });
      const edited = await t.call({ method: "GET", url: `${BASE}/${hook.id}`, headers: { authorization: who.bearer } });
      expect(edited.json().data).toMatchObject({ description: "Pager duty", events: ["issue.opened"] });
      await page.locator(".facts").getByText("Pager duty").waitFor({ timeout: WAIT_MS });

      // Rotation asks first, then shows the new secret once; the receiver sees both signatures.
      await page.getByRole("button", { name: "Rotate secret" }).click();
      const dialog = page.getByRole("dialog");
      await dialog.waitFor({ timeout: WAIT_MS });
      expect(await dialog.textContent()).toContain("24 hours");
      await screenshot(page, "notifications-05-confirm-rotate");
      await expectAccessible(page);
      await dialog.getByRole("button", { name: "Rotate secret" }).click();
      await shown.waitFor({ timeout: WAIT_MS });
      const rotated = String(await shown.textContent());
      expect(rotated).toMatch(/^whsec_/);
      expect(rotated).not.toBe(secret);
      await page
        .locator(".facts")
        .getByText(/Signs alongside the current one until/)
        .waitFor({ timeout: WAIT_MS });
      await screenshot(page, "notifications-06-rotated");
      await expectAccessible(page);

      await announce("iss_second");
      const second = rx.at("/ops-hook")[1];
      if (!second) throw new Error("nothing received after the rotation");
      expect(String(second.headers["webhook-signature"]).split(" ")).toHaveLength(2);
      expect(new Webhook(rotated).verify(second.body, headersOf(second))).toMatchObject({ type: "issue.opened" });

      await page.getByRole("button", { name: "I have copied it" }).click();
      await shown.waitFor({ state: "detached", timeout: WAIT_MS });
      expect(await documentText(page)).not.toContain(rotated);
      // The new message shows up in the history on a fresh look.
      await page.reload();
      await page.getByRole("row").filter({ hasText: "issue.opened" }).nth(1).waitFor({ timeout: WAIT_MS });

      // Delete asks first, then returns to the (empty) list.
      await page.getByRole("button", { name: "Delete" }).click();
      await dialog.getByRole("button", { name: "Delete" }).click();
      await page.getByText("No operational webhooks yet.").waitFor({ timeout: WAIT_MS });
      const gone = await t.call({ method: "GET", url: `${BASE}/${hook.id}`, headers: { authorization: who.bearer } });
      expect(gone.statusCode).toBe(404);

      dropRefusals(log, 400, BASE);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("shows a webhook that does not exist as a clear error", { timeout: 60_000 }, async () => {
    const { context, page, log } = await openDashboardPage(browser, origin, { expectedStatuses: [404] });
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, who);
      await page.goto(`${origin}/notifications/wh_missing`);
      await page
        .getByRole("alert")
        .getByText(/wh_missing/)
        .waitFor({ timeout: WAIT_MS });
      await screenshot(page, "notifications-07-missing");
      await expectAccessible(page);
      dropRefusals(log, 404, `${BASE}/wh_missing`);
      expectClean(log);
    } finally {
      await context.close();
    }
  });

  it("offers nothing to change to a person without account.admin", { timeout: 90_000 }, async () => {
    const { email, password } = await addPerson(t, who.tenantId, {
      name: "Reader",
      permissions: ["webhooks.read", "reports.read"],
    });
    const { context, page, log } = await openDashboardPage(browser, origin);
    try {
      await page.goto(`${origin}/sign-in`);
      await signIn(page, { email, password });
      await page.getByRole("link", { name: "Operational webhooks" }).click();
      await page.getByText("Operational webhooks are managed by account admins").waitFor({ timeout: WAIT_MS });
      expect(await page.getByRole("button", { name: "Register a webhook" }).count()).toBe(0);
      await screenshot(page, "notifications-08-reader");
      await expectAccessible(page);
      expectClean(log);
    } finally {
      await context.close();
    }
  });
});
