import { Cron } from "croner";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiToken } from "../src/features/api-tokens/index.js";
import { closeIssue, raiseIssue } from "../src/features/issues/index.js";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { startSmtpServer } from "./helpers/smtp.js";

const auth = (value: string) => ({ authorization: value });

describe("API key expiry, account issues and mail", () => {
  let t: TestApp;
  let smtp: Awaited<ReturnType<typeof startSmtpServer>>;
  let who: Tenancy;
  let key: { id: string; token: string };
  let expiresAt: Date;

  beforeAll(async () => {
    smtp = await startSmtpServer();
    t = await startTestApp({ env: { SMTP_URL: smtp.url, MAIL_FROM: "Tracking <alerts@tracking.test>" } });
    t.clock.set("2026-03-01T08:00:00Z");
    who = await seedTenancy(t);
    expiresAt = new Date("2026-03-20T12:00:00Z");
    key = await createApiToken(
      t.ctx.db,
      who.tenantId,
      { name: "Expiring export", expirationDate: expiresAt },
      { type: "user", id: who.userId, name: "Person" },
      t.clock.now(),
    );
  });
  afterAll(async () => {
    await t.close();
    await smtp.close();
  });

  async function runExpiryJob(now: string) {
    t.clock.set(now);
    const res = await t.call({
      method: "POST",
      url: "/api/admin/jobs/api-token-expiry/run",
      headers: auth(`Bearer ${ADMIN_KEY}`),
      payload: { now },
    });
    expect(res.statusCode).toBe(200);
    expect(res.json().data.ran).toBe(true);
    await t.ctx.mail.flush();
    return res.json().data.summary;
  }

  async function keyIssue() {
    // The tenant's other key: a bearer token would have expired as the clock moves on by days.
    const res = await t.call({
      method: "GET",
      url: "/api/v1/issues?kind=api_token_expiring",
      headers: auth(who.apiKey),
    });
    const issues = (res.json().data as { subject: { id: string } }[]).filter((i) => i.subject.id === key.id);
    expect(issues.length).toBeLessThanOrEqual(1);
    return issues[0] as (Record<string, unknown> & { id: string; severity: string; status: string }) | undefined;
  }

  it("runs hourly on the scheduler, raising and escalating only in the 08:00 UTC run", async () => {
    const job = t.ctx.jobs.find("api-token-expiry");
    const next = new Cron(job?.cron ?? "", { timezone: "UTC" }).nextRun(new Date("2026-03-01T09:00:30Z"));
    expect(next?.toISOString()).toBe("2026-03-01T10:00:00.000Z");
    // 7 calendar days before expiry, but not the 08:00 run: nothing is raised yet.
    expect(await runExpiryJob("2026-03-13T07:00:00Z")).toMatchObject({ opened: 0, escalated: 0 });
    expect(await keyIssue()).toBeUndefined();
  });

  it("raises nothing more than 7 days before expiry", async () => {
    await runExpiryJob("2026-03-12T08:00:00Z");
    expect(await keyIssue()).toBeUndefined();
    expect(smtp.received).toHaveLength(0);
  });

  it("raises a warning 7 days before expiry with the key's name, expiry and last use, and mails the admins", async () => {
    // The key was used once, so the issue can say when.
    t.clock.set("2026-03-13T07:00:00Z");
    expect(
      (await t.call({ method: "GET", url: "/api/v1/users", headers: auth(`ApiKey ${key.token}`) })).statusCode,
    ).toBe(200);
    await t.ctx.lastUsed.flush();
    await runExpiryJob("2026-03-13T08:00:00Z");
    const issue = await keyIssue();
    expect(issue).toMatchObject({
      kind: "api_token_expiring",
      severity: "warning",
      status: "open",
      title: "API key 'Expiring export' expires on 2026-03-20",
      subject: { type: "api_token", id: key.id, name: "Expiring export" },
      details: {
        keyName: "Expiring export",
        expirationDate: expiresAt.toISOString(),
        lastUsedAt: "2026-03-13T07:00:00.000Z",
      },
      closedAt: null,
    });
    expect(smtp.received).toHaveLength(1);
    const mail = smtp.received[0];
    expect(mail?.to).toEqual([who.email]);
    expect(mail?.from).toBe("alerts@tracking.test");
    expect(mail?.raw).toContain("Subject: [warning] Opened: API key 'Expiring export' expires on 2026-03-20");
    expect(mail?.raw).toContain("expirationDate: 2026-03-20T12:00:00.000Z");
  });

  it("does not duplicate the issue or the mail when the job runs again", async () => {
    const first = await keyIssue();
    const summary = await runExpiryJob("2026-03-14T08:00:00Z");
    expect(summary).toMatchObject({ opened: 0, escalated: 0 });
    expect((await keyIssue())?.id).toBe(first?.id);
    expect(smtp.received).toHaveLength(1);
  });

  it("escalates inside the last day before expiry, in the 08:00 run", async () => {
    await runExpiryJob("2026-03-19T15:00:00Z");
    expect(await keyIssue()).toMatchObject({ severity: "warning" });
    await runExpiryJob("2026-03-20T08:00:00Z");
    expect(await keyIssue()).toMatchObject({ severity: "error", status: "open" });
    expect(smtp.received).toHaveLength(2);
    expect(smtp.received[1]?.raw).toContain("Subject: [error] Escalated:");
  });

  it("at expiry the key stops working and the issue turns critical in the next hourly run", async () => {
    t.clock.set("2026-03-20T12:00:00Z");
    const refused = await t.call({ method: "GET", url: "/api/v1/users", headers: auth(`ApiKey ${key.token}`) });
    expect(refused.statusCode).toBe(401);
    await runExpiryJob("2026-03-20T11:00:00Z");
    expect(await keyIssue()).toMatchObject({ severity: "error" });
    await runExpiryJob("2026-03-20T13:00:00Z");
    expect(await keyIssue()).toMatchObject({
      severity: "critical",
      title: "API key 'Expiring export' expired on 2026-03-20 and no longer works",
    });
    expect(smtp.received).toHaveLength(3);
    expect(smtp.received[2]?.raw).toContain("Subject: [critical] Escalated:");
    // Later runs, hourly and daily, find it critical already: no second mail.
    await runExpiryJob("2026-03-20T14:00:00Z");
    await runExpiryJob("2026-03-21T08:00:00Z");
    expect(await keyIssue()).toMatchObject({ severity: "critical" });
    expect(smtp.received).toHaveLength(3);
  });

  it("closes the issue, and mails it, when the key is deleted", async () => {
    const res = await t.call({ method: "DELETE", url: `/api/v1/api-tokens/${key.id}`, headers: auth(who.apiKey) });
    expect(res.json().data.deleted).toBe(true);
    await t.ctx.mail.flush();
    const closed = await t.call({ method: "GET", url: "/api/v1/issues?status=closed", headers: auth(who.apiKey) });
    const issue = (closed.json().data as { subject: { id: string } }[]).find((i) => i.subject.id === key.id);
    expect(issue).toMatchObject({
      status: "closed",
      closedAt: "2026-03-21T08:00:00.000Z",
      details: { resolution: "the key was deleted" },
    });
    expect(smtp.received).toHaveLength(4);
    expect(smtp.received[3]?.raw).toContain("Resolved: API key 'Expiring export'");
  });
});

describe("the expiry issue turns critical within the hour of expiry", () => {
  const HOUR_MS = 3_600_000;
  let t: TestApp;
  let who: Tenancy;
  let slots: Cron;
  /** The last scheduled slot run so far. */
  let ranUntil: Date;

  beforeAll(async () => {
    t = await startTestApp();
    t.clock.set("2026-05-01T08:30:00Z");
    who = await seedTenancy(t);
    const hook = await t.call({
      method: "POST",
      url: "/api/v1/notifications/webhooks",
      headers: auth(who.apiKey),
      payload: { url: "https://ops.example.test/hooks", events: ["api_token.expiring", "api_token.expired"] },
    });
    expect(hook.statusCode, hook.body).toBe(201);
    slots = new Cron(t.ctx.jobs.find("api-token-expiry")?.cron ?? "", { timezone: "UTC" });
    ranUntil = t.clock.now();
  });
  afterAll(() => t.close());

  /** Does what the scheduler would: runs the job at every slot of its cron up to `until`. */
  async function runSlotsUntil(until: string) {
    for (let slot = slots.nextRun(ranUntil); slot && slot <= new Date(until); slot = slots.nextRun(slot)) {
      t.clock.set(slot);
      const res = await t.call({
        method: "POST",
        url: "/api/admin/jobs/api-token-expiry/run",
        headers: auth(`Bearer ${ADMIN_KEY}`),
        payload: { now: slot.toISOString() },
      });
      expect(res.statusCode, res.body).toBe(200);
      ranUntil = slot;
    }
  }

  const newKey = (name: string, expirationDate: string) =>
    createApiToken(
      t.ctx.db,
      who.tenantId,
      { name, expirationDate: new Date(expirationDate) },
      { type: "user", id: who.userId, name: "Person" },
      t.clock.now(),
    );

  async function issueOf(id: string) {
    const res = await t.call({
      method: "GET",
      url: "/api/v1/issues?kind=api_token_expiring",
      headers: auth(who.apiKey),
    });
    return (res.json().data as { subject: { id: string }; severity: string; title: string }[]).find(
      (i) => i.subject.id === id,
    );
  }

  async function events(id: string) {
    const rows = await t.ctx.db.query<{ type: string; body: string }>(
      "select type, body from notification_messages where tenant_id = $1 order by created_at, id",
      [who.tenantId],
    );
    return rows
      .filter((r) => (JSON.parse(r.body) as { data: { id: string } }).data.id === id)
      .map((r) => `${r.type} ${(JSON.parse(r.body) as { timestamp: string }).timestamp}`);
  }

  it("raises at 08:00, escalates at 08:00, and turns critical in the first hourly run after expiry", async () => {
    const key = await newKey("Half past ten", "2026-05-05T10:30:00Z");
    // Inside 7 days from the start, but the hourly runs leave raising to the 08:00 run.
    await runSlotsUntil("2026-05-02T07:00:00Z");
    expect(await issueOf(key.id)).toBeUndefined();
    await runSlotsUntil("2026-05-02T08:00:00Z");
    expect(await issueOf(key.id)).toMatchObject({ severity: "warning" });
    // Less than a day left from 10:30 the day before: escalation still waits for 08:00.
    await runSlotsUntil("2026-05-05T07:00:00Z");
    expect(await issueOf(key.id)).toMatchObject({ severity: "warning" });
    await runSlotsUntil("2026-05-05T10:00:00Z");
    expect(await issueOf(key.id)).toMatchObject({ severity: "error" });
    await runSlotsUntil("2026-05-05T11:00:00Z");
    expect(await issueOf(key.id)).toMatchObject({
      severity: "critical",
      title: "API key 'Half past ten' expired on 2026-05-05 and no longer works",
    });
    expect(t.clock.now().getTime() - new Date("2026-05-05T10:30:00Z").getTime()).toBeLessThanOrEqual(HOUR_MS);
    // The expiry is announced once, by the run that turned the issue critical.
    await runSlotsUntil("2026-05-06T09:00:00Z");
    expect(await events(key.id)).toEqual([
      "api_token.expiring 2026-05-02T08:00:00.000Z",
      "api_token.expired 2026-05-05T11:00:00.000Z",
    ]);
  });

  it("opens a critical issue within the hour for a key that expires before any 08:00 run saw it", async () => {
    const key = await newKey("Short lived", "2026-05-06T09:20:00Z");
    await runSlotsUntil("2026-05-06T10:00:00Z");
    expect(await issueOf(key.id)).toMatchObject({ severity: "critical" });
    await runSlotsUntil("2026-05-07T09:00:00Z");
    expect(await events(key.id)).toEqual(["api_token.expired 2026-05-06T10:00:00.000Z"]);
  });
});

describe("account issues", () => {
  let t: TestApp;
  let a: Tenancy;
  let b: Tenancy;

  beforeAll(async () => {
    t = await startTestApp();
    a = await seedTenancy(t);
    b = await seedTenancy(t);
  });
  afterAll(() => t.close());

  const raise = (severity: "warning" | "error" | "critical") =>
    t.ctx.db.transaction((tx) =>
      raiseIssue(
        tx,
        {
          tenantId: a.tenantId,
          kind: "outgoing_webhook_failed",
          severity,
          title: "Outgoing Webhook Failed",
          subject: { type: "webhook", id: "wh_test", name: "Receiver" },
          details: { errorType: "timeout" },
        },
        t.clock.now(),
      ),
    );

  it("keeps one issue per kind and subject, reopened rather than duplicated", async () => {
    const opened = await raise("error");
    expect(opened.change).toBe("opened");
    expect((await raise("error")).change).toBe("updated");
    const closed = await t.ctx.db.transaction((tx) =>
      closeIssue(
        tx,
        { tenantId: a.tenantId, kind: "outgoing_webhook_failed", subject: { type: "webhook", id: "wh_test" } },
        "a 2xx came back",
        t.clock.now(),
      ),
    );
    expect(closed.change).toBe("closed");
    t.clock.advance(60_000);
    const reopened = await raise("warning");
    expect(reopened.change).toBe("opened");
    expect(reopened.issue.id).toBe(opened.issue.id);
    expect(reopened.issue).toMatchObject({ status: "open", severity: "warning", closedAt: null });
    const list = await t.call({
      method: "GET",
      url: "/api/v1/issues?kind=outgoing_webhook_failed",
      headers: auth(a.bearer),
    });
    expect(list.json().pagination.total).toBe(1);
  });

  it("keeps mail in the outbox and the log when no SMTP_URL is set", async () => {
    await t.ctx.mail.flush();
    const rows = await t.ctx.db.query<{ status: string; recipients: string[]; subject: string }>(
      "select status, recipients, subject from mail_outbox where tenant_id = $1 order by created_at, id",
      [a.tenantId],
    );
    // opened, closed, reopened; the plain update sent nothing.
    expect(rows.map((r) => r.subject)).toEqual([
      "[error] Opened: Outgoing Webhook Failed",
      "[error] Resolved: Outgoing Webhook Failed",
      "[warning] Opened: Outgoing Webhook Failed",
    ]);
    expect(rows.every((r) => r.status === "logged" && r.recipients[0] === a.email)).toBe(true);
  });

  it("filters by status and kind, gets one, and hides other tenants' issues", async () => {
    const open = await t.call({ method: "GET", url: "/api/v1/issues?status=open", headers: auth(a.bearer) });
    const [issue] = open.json().data as { id: string }[];
    expect(issue).toBeDefined();
    const one = await t.call({ method: "GET", url: `/api/v1/issues/${issue?.id}`, headers: auth(a.bearer) });
    expect(one.statusCode).toBe(200);
    expect(
      (await t.call({ method: "GET", url: "/api/v1/issues?status=closed", headers: auth(a.bearer) })).json().data,
    ).toEqual([]);
    const theirs = await t.call({ method: "GET", url: `/api/v1/issues/${issue?.id}`, headers: auth(b.bearer) });
    expect(theirs.statusCode).toBe(404);
    expect(
      (await t.call({ method: "GET", url: "/api/v1/issues", headers: auth(b.bearer) })).json().pagination.total,
    ).toBe(0);
    const bad = await t.call({ method: "GET", url: "/api/v1/issues?kind=nonsense", headers: auth(a.bearer) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("kind");
  });
});
