/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { HOUR_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  attemptsOf,
  cancelWaitingEvents,
  conversionsAt,
  convert,
  createHook,
  eventOf,
  getEvent,
  getHook,
  issuesOf,
  mailsAbout,
  patchHook,
  receiverPaths,
  startWebhookTestApp,
  withId,
} from "./helpers/webhooks.js";

// 'Webhook URL Is Invalid' (docs/outgoing-webhooks.md): a URL saved before save-time validation
// existed and broken at send time. Save-time validation refuses such URLs, so each test saves a valid
// webhook through the API and then writes the old URL into its row, as a migration would have
// left it. A placeholder that is not a plain name, or a URL that does not render to an absolute
// http(s) address, stops deliveries (webhook Suspended); a placeholder naming nothing held sends
// the delivery with that value blank. Both raise the issue, which is also mailed.

let t: TestApp;
let rx: Receiver;
/** The instant every test starts at: tests move the clock, afterEach puts it back. */
let START: Date;

beforeAll(async () => {
  t = await startWebhookTestApp();
  rx = await startReceiver();
  START = t.clock.now();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
afterEach(async () => {
  await cancelWaitingEvents(t);
  t.clock.set(START);
});

const path = receiverPaths("/url");
const tick = () => t.ctx.delivery.tick();

/** The issue's subject names the webhook: every one here has this name. */
const createLegacyHook = (who: Tenancy, body: Record<string, unknown>) =>
  createHook(t, who, { name: "Legacy receiver", ...body });

/** Writes a URL into the webhook's row, bypassing save-time validation (saved "before it existed"). */
async function saveLegacyUrl(hookId: string, url: string): Promise<void> {
  const rows = await t.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1 returning 1", [hookId, url]);
  expect(rows).toHaveLength(1);
}

const urlIssues = (who: Tenancy) => issuesOf(t, who, "webhook_url_invalid");

/** Subjects of the tenant's 'Webhook URL Is Invalid' mails, oldest first; each must reach the admin. */
async function urlMails(who: Tenancy): Promise<string[]> {
  const mails = await mailsAbout(t, who.tenantId, "Webhook URL Is Invalid");
  for (const mail of mails) expect(mail.recipients).toContain(who.email);
  return mails.map((m) => m.subject);
}

// URLs whose deliveries must stop. `p` is the test's receiver path; every template would reach the
// receiver if the service sent it anyway.
const STOPPING: [string, (p: string) => string][] = [
  ["a dotted placeholder {{click.id}}", (p) => `${rx.base}${p}?c=\${conversionId}&x={{click.id}}`],
  ["a placeholder with a space ${a b}", (p) => `${rx.base}${p}?c=\${conversionId}&x=\${a b}`],
  ["a raw dotted placeholder {{{account.name}}}", (p) => `${rx.base}${p}?c=\${conversionId}&a={{{account.name}}}`],
  ["a dotted placeholder beside an unknown one", (p) => `${rx.base}${p}?y={{nosuchname}}&x=\${click.id}`],
  ["a URL that renders to a relative path", (p) => `{{clickId}}${p}?c=\${conversionId}`],
  ["an ftp URL", (p) => `ftp://127.0.0.1:${rx.port}${p}?c=\${conversionId}`],
  ["a URL without a scheme", (p) => `127.0.0.1:${rx.port}${p}?c=\${conversionId}`],
];

describe("a placeholder that is not a plain name, or no web address: deliveries stop", () => {
  it.each(STOPPING)(
    "%s: nothing is sent, the event is Paused, the webhook Suspended, an error issue mailed",
    async (_label, template) => {
      const who = await seedTenancy(t);
      const p = path("stop");
      const hook = await createLegacyHook(who, { url: withId(rx, p) });
      const legacy = template(p);
      await saveLegacyUrl(hook.id, legacy);
      const sentBefore = rx.requests.length;

      const conversion = await convert(t, who);
      const event = await eventOf(t, who, conversion);
      expect(event.status).toBe("Queued");
      expect(await tick()).toBe(1);

      // Nothing reached the receiver (nor anything else on it).
      expect(rx.at(p)).toEqual([]);
      expect(rx.requests).toHaveLength(sentBefore);

      // The event waits for the webhook to be enabled again; the attempt says why.
      expect(await getEvent(t, who, event.id)).toMatchObject({
        status: "Paused",
        attempts: 1,
        lastAttemptAt: t.clock.now().toISOString(),
        nextAttemptAt: null,
      });
      const attempts = await attemptsOf(t, who, event.id);
      expect(attempts).toHaveLength(1);
      expect(attempts[0]).toMatchObject({ attempt: 1, urlTemplate: legacy, method: "GET", errorType: "invalid_url" });
      expect(attempts[0]?.response).toBeNull();
      expect(attempts[0]?.error).toEqual(expect.any(String));
      expect(attempts[0]?.error).not.toBe("");

      const webhook = await getHook(t, who, hook.id);
      expect(webhook.status).toBe("Suspended");
      expect(webhook.statusReason).toMatch(/invalid/i);
      expect(webhook.statusReason).toContain(attempts[0]?.error as string);

      const issues = await urlIssues(who);
      expect(issues).toHaveLength(1);
      expect(issues[0]).toMatchObject({
        kind: "webhook_url_invalid",
        status: "open",
        severity: "error",
        subject: { type: "outgoing_webhook", id: hook.id, name: "Legacy receiver" },
        closedAt: null,
      });
      expect(issues[0]?.title).toMatch(/Webhook URL Is Invalid/);
      expect(issues[0]?.details.postbacksStopped).toBe(true);
      expect(issues[0]?.details.urlTemplate).toBe(legacy);
      expect(await urlMails(who)).toEqual([expect.stringMatching(/^\[error\] Opened: Webhook URL Is Invalid/)]);

      // Later conversions are Paused from the start; nothing is sent however long we wait.
      const later = await convert(t, who);
      expect(await eventOf(t, who, later)).toMatchObject({ status: "Paused", attempts: 0 });
      t.clock.advance(3 * HOUR_MS);
      expect(await tick()).toBe(0);
      expect(rx.requests).toHaveLength(sentBefore);
      expect((await getHook(t, who, hook.id)).status).toBe("Suspended");
      expect(await getEvent(t, who, event.id)).toMatchObject({ status: "Paused", attempts: 1 });
      // Still one issue and one mail.
      expect(await urlIssues(who)).toHaveLength(1);
      expect(await urlMails(who)).toHaveLength(1);
    },
  );

  it("stops the webhook's other events claimed in the same batch without sending any of them", async () => {
    const who = await seedTenancy(t);
    const p = path("batch");
    const hook = await createLegacyHook(who, { url: withId(rx, p) });
    await saveLegacyUrl(hook.id, `${rx.base}${p}?c={{conversion.id}}`);
    const ids = [await convert(t, who), await convert(t, who), await convert(t, who)];

    expect(await tick()).toBe(3);
    expect(rx.at(p)).toEqual([]);
    const events = await Promise.all(ids.map((id) => eventOf(t, who, id)));
    expect(events.map((e) => e.status)).toEqual(["Paused", "Paused", "Paused"]);
    // One attempt is logged for the event that found the URL broken; the others were not tried.
    expect(events.reduce((n, e) => n + e.attempts, 0)).toBe(1);
    expect((await getHook(t, who, hook.id)).status).toBe("Suspended");
    expect(await urlIssues(who)).toHaveLength(1);
    expect(await urlMails(who)).toHaveLength(1);
  });

  it("leaves the tenant's other webhooks sending", async () => {
    const who = await seedTenancy(t);
    const [pBroken, pFine] = [path("broken"), path("fine")];
    const broken = await createLegacyHook(who, { url: withId(rx, pBroken) });
    const fine = await createLegacyHook(who, { name: "Fine receiver", url: withId(rx, pFine) });
    await saveLegacyUrl(broken.id, `${rx.base}${pBroken}?c=\${conversion id}`);

    const conversion = await convert(t, who);
    expect(await tick()).toBe(2);
    expect(rx.at(pBroken)).toEqual([]);
    expect(conversionsAt(rx, pFine)).toEqual([conversion]);
    expect((await getHook(t, who, broken.id)).status).toBe("Suspended");
    expect((await getHook(t, who, fine.id)).status).toBe("Enabled");
    const issues = await urlIssues(who);
    expect(issues.map((i) => i.subject.id)).toEqual([broken.id]);
  });
});

describe("a placeholder naming nothing held: the delivery goes out with it blank", () => {
  it("sends with the value blank, keeps the webhook Enabled, raises a warning issue listing it, mailed once", async () => {
    const who = await seedTenancy(t);
    const p = path("blank");
    const hook = await createLegacyHook(who, { url: withId(rx, p) });
    const legacy = `${rx.base}${p}?c=\${conversionId}&y={{nosuchname}}&e=\${eventName}&w=\${alsoMissing}`;
    await saveLegacyUrl(hook.id, legacy);

    const conversion = await convert(t, who);
    expect(await tick()).toBe(1);
    const [received] = rx.at(p);
    expect(rx.at(p)).toHaveLength(1);
    expect(received?.query.get("c")).toBe(conversion);
    expect(received?.query.get("y")).toBe("");
    expect(received?.query.get("w")).toBe("");
    expect(received?.query.get("e")).toBe("Signup");
    expect(received?.url).toBe(`${p}?c=${conversion}&y=&e=Signup&w=`);

    const event = await eventOf(t, who, conversion);
    expect(event).toMatchObject({ status: "Delivered", attempts: 1 });
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt).toMatchObject({ urlTemplate: legacy, errorType: null, response: { status: 200 } });

    const webhook = await getHook(t, who, hook.id);
    expect(webhook.status).toBe("Enabled");
    expect(webhook.statusReason).toBeNull();

    const issues = await urlIssues(who);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({
      kind: "webhook_url_invalid",
      status: "open",
      severity: "warning",
      subject: { type: "outgoing_webhook", id: hook.id, name: "Legacy receiver" },
    });
    expect(issues[0]?.details.postbacksStopped).toBe(false);
    expect(issues[0]?.details.placeholders).toEqual(["{{nosuchname}}", "${alsoMissing}"]);
    expect(await urlMails(who)).toEqual([expect.stringMatching(/^\[warning\] Opened: Webhook URL Is Invalid/)]);

    // The next delivery goes out the same way; still one issue and one mail.
    const second = await convert(t, who);
    expect(await tick()).toBe(1);
    expect(conversionsAt(rx, p)).toEqual([conversion, second]);
    expect(rx.at(p)[1]?.query.get("y")).toBe("");
    expect(await urlIssues(who)).toHaveLength(1);
    expect(await urlMails(who)).toHaveLength(1);

    // Saving a URL through the API (validated) closes the issue.
    await patchHook(t, who, hook.id, { url: withId(rx, p) });
    const [closed] = await urlIssues(who);
    expect(closed).toMatchObject({ status: "closed", closedAt: expect.any(String) });
    const third = await convert(t, who);
    expect(await tick()).toBe(1);
    expect(rx.at(p)[2]?.url).toBe(`${p}?c=${third}`);
    expect((await urlIssues(who))[0]?.status).toBe("closed");
  });

  it("escalates the same issue to an error once the URL turns into one that stops deliveries", async () => {
    const who = await seedTenancy(t);
    const p = path("escalate");
    const hook = await createLegacyHook(who, { url: withId(rx, p) });
    await saveLegacyUrl(hook.id, `${rx.base}${p}?c=\${conversionId}&y={{nosuchname}}`);
    await convert(t, who);
    await tick();
    expect(rx.at(p)).toHaveLength(1);
    expect((await urlIssues(who))[0]).toMatchObject({ severity: "warning", details: { postbacksStopped: false } });

    await saveLegacyUrl(hook.id, `${rx.base}${p}?c=\${conversionId}&y={{no.such.name}}`);
    await convert(t, who);
    await tick();
    expect(rx.at(p)).toHaveLength(1);
    expect((await getHook(t, who, hook.id)).status).toBe("Suspended");
    const issues = await urlIssues(who);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ status: "open", severity: "error", details: { postbacksStopped: true } });
    expect(await urlMails(who)).toEqual([
      expect.stringMatching(/^\[warning\] Opened: Webhook URL Is Invalid/),
      expect.stringMatching(/^\[error\] Escalated: Webhook URL Is Invalid/),
    ]);
  });
});

describe("Suspended -> Enabled only by the caller", () => {
  it("fixing the URL closes the issue; PATCH status Enabled re-queues the Paused events and the next tick sends them", async () => {
    const who = await seedTenancy(t);
    const p = path("reenable");
    const hook = await createLegacyHook(who, { url: withId(rx, p) });
    const legacy = `${rx.base}${p}?c=\${conversionId}&x={{click.id}}`;
    await saveLegacyUrl(hook.id, legacy);

    const first = await convert(t, who);
    await tick();
    const second = await convert(t, who);
    expect((await getHook(t, who, hook.id)).status).toBe("Suspended");
    expect((await eventOf(t, who, first)).status).toBe("Paused");
    expect((await eventOf(t, who, second)).status).toBe("Paused");

    // Time alone re-enables nothing.
    t.clock.advance(24 * HOUR_MS);
    expect(await tick()).toBe(0);
    expect((await getHook(t, who, hook.id)).status).toBe("Suspended");

    // A valid URL saved through the API closes the issue; the webhook stays Suspended.
    const fixed = await patchHook(t, who, hook.id, { url: withId(rx, p) });
    expect(fixed.status).toBe("Suspended");
    const [issue] = await urlIssues(who);
    expect(issue).toMatchObject({ status: "closed", closedAt: t.clock.now().toISOString() });
    expect(await tick()).toBe(0);
    expect(rx.at(p)).toEqual([]);

    const enabled = await patchHook(t, who, hook.id, { status: "Enabled" });
    expect(enabled).toMatchObject({ status: "Enabled", statusReason: null });
    for (const id of [first, second]) {
      expect(await eventOf(t, who, id)).toMatchObject({ status: "Queued", nextAttemptAt: t.clock.now().toISOString() });
    }
    expect(await tick()).toBe(2);
    expect(conversionsAt(rx, p).sort()).toEqual([first, second].sort());
    const firstEvent = await eventOf(t, who, first);
    expect(firstEvent).toMatchObject({ status: "Delivered", attempts: 2 });
    const attempts = await attemptsOf(t, who, firstEvent.id);
    expect(attempts.map((a) => [a.attempt, a.urlTemplate, a.errorType, a.response?.status ?? null])).toEqual([
      [1, legacy, "invalid_url", null],
      [2, withId(rx, p), null, 200],
    ]);
    expect(await eventOf(t, who, second)).toMatchObject({ status: "Delivered", attempts: 1 });

    // New conversions go out as usual again.
    const third = await convert(t, who);
    expect(await tick()).toBe(1);
    expect(conversionsAt(rx, p)).toContain(third);
  });

  it("re-enabled with the URL still broken: the next send suspends it again, with the same open issue", async () => {
    const who = await seedTenancy(t);
    const p = path("still-broken");
    const hook = await createLegacyHook(who, { url: withId(rx, p) });
    await saveLegacyUrl(hook.id, `${rx.base}${p}?c=\${conversion.id}`);
    const conversion = await convert(t, who);
    await tick();
    expect((await getHook(t, who, hook.id)).status).toBe("Suspended");

    await patchHook(t, who, hook.id, { status: "Enabled" });
    expect((await eventOf(t, who, conversion)).status).toBe("Queued");
    expect(await tick()).toBe(1);
    expect(rx.at(p)).toEqual([]);
    const webhook = await getHook(t, who, hook.id);
    expect(webhook.status).toBe("Suspended");
    expect(webhook.statusReason).toMatch(/invalid/i);
    const event = await eventOf(t, who, conversion);
    expect(event).toMatchObject({ status: "Paused", attempts: 2 });
    expect((await attemptsOf(t, who, event.id)).map((a) => a.errorType)).toEqual(["invalid_url", "invalid_url"]);
    const issues = await urlIssues(who);
    expect(issues).toHaveLength(1);
    expect(issues[0]).toMatchObject({ status: "open", severity: "error" });
  });
});
