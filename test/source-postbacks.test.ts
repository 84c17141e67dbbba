/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: postback URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type SourcePostbackWorker, sourcePostbackWorker } from "../src/features/source-postbacks/index.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import { ADMIN_KEY, type TestApp } from "./helpers/app.js";
import { createVia } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import {
  cancelWaitingPostbacks,
  clickOn,
  getPostbacks,
  postbackAttempts,
  postbacksOf,
  resendPostback,
  setPostback,
  startPostbackApp,
} from "./helpers/source-postbacks.js";
import {
  createHook,
  eventOf,
  receiverPaths,
  recordConversion,
  seedTenantWithCatalog,
  type TenantWithCatalog,
} from "./helpers/webhooks.js";

// Traffic-source postbacks (docs/traffic-source-postbacks.md), from the click that carries the
// source's own click id to what a real loopback receiver gets: which conversions queue one, the
// URL's values, retries and the attempt log, resend, the webhook allowance, tenant isolation.

let t: TestApp;
let worker: SourcePostbackWorker;
let rx: Receiver;

beforeAll(async () => {
  ({ t, worker } = await startPostbackApp());
  rx = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
afterEach(() => cancelWaitingPostbacks(t));

const path = receiverPaths("/tsp");
const tick = () => worker.tick();
/** A postback template to `p` that reads back the source's click id, the conversion, the payout and the value. */
const template = (p: string) =>
  `${rx.base}${p}?sub=\${externalId}&conv={{conversionId}}&payout=\${payout}&value=\${eventValue}&type=\${conversionType}`;

async function withPostback(p: string, postback: Record<string, unknown> = {}): Promise<TenantWithCatalog> {
  const tenant = await seedTenantWithCatalog(t);
  await setPostback(t, tenant.who, tenant.cat.trafficSourceId, "zid", { url: template(p), ...postback });
  return tenant;
}

describe("queueing: which conversions send a postback", () => {
  it("captures the source's click id with the click and sends it in the postback", async () => {
    const p = path("captured");
    const { who, cat } = await withPostback(p);
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=ab%20c%2F1&pa=x");
    const conversion = await recordConversion(t, who, { type: "Deposit", clickId, value: 50, currency: "EUR" });

    const [stored] = await t.ctx.db.query<{ source_click_id: string | null }>(
      "select source_click_id from clicks where id = $1",
      [clickId],
    );
    expect(stored?.source_click_id).toBe("ab c/1");

    const [queued, ...more] = await postbacksOf(t, who, cat.trafficSourceId);
    expect(more).toEqual([]);
    expect(queued).toMatchObject({ conversionId: conversion.id, status: "Queued", attempts: 0, lastAttemptAt: null });
    expect(queued?.id).toMatch(/^tsp_/);
    expect(Object.keys(queued ?? {}).sort()).toEqual(
      ["attempts", "conversionId", "conversionStatus", "createdAt", "id", "lastAttemptAt", "status"].sort(),
    );

    expect(await tick()).toBe(1);
    const [got, ...again] = rx.at(p);
    expect(again).toEqual([]);
    expect(got?.method).toBe("GET");
    expect(got?.query.get("sub")).toBe("ab c/1");
    expect(got?.url).toContain("sub=ab%20c%2F1");
    expect(got?.query.get("conv")).toBe(conversion.id);
    expect(got?.query.get("value")).toBe("50");
    // No payout share: the payout is empty, not the whole value.
    expect(got?.query.get("payout")).toBe("");
    const [delivered] = await postbacksOf(t, who, cat.trafficSourceId);
    expect(delivered).toMatchObject({ status: "Delivered", attempts: 1 });
    expect(delivered?.lastAttemptAt).not.toBeNull();
  });

  it("sends only the filtered types, with the payout share of the value", async () => {
    const p = path("filtered");
    const { who, cat } = await withPostback(p, { conversionTypes: ["Deposit", "FirstTimeDeposit"], payoutShare: 40 });
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=z-1");
    const signup = await recordConversion(t, who, { type: "Signup", clickId });
    const deposit = await recordConversion(t, who, { type: "Deposit", clickId, value: 25.5, currency: "EUR" });
    const ftd = await recordConversion(t, who, { type: "FirstTimeDeposit", clickId });

    const queued = await postbacksOf(t, who, cat.trafficSourceId);
    expect(queued.map((q) => q.conversionId).sort()).toEqual([deposit.id, ftd.id].sort());
    expect(await postbacksOf(t, who, cat.trafficSourceId, `?conversionId=${signup.id}`)).toEqual([]);

    expect(await tick()).toBe(2);
    const byConversion = new Map(rx.at(p).map((r) => [r.query.get("conv"), r.query]));
    expect(byConversion.get(deposit.id)?.get("payout")).toBe("10.2");
    expect(byConversion.get(deposit.id)?.get("type")).toBe("Deposit");
    // A conversion without a value has no payout.
    expect(byConversion.get(ftd.id)?.get("payout")).toBe("");
    expect(byConversion.get(ftd.id)?.get("sub")).toBe("z-1");
  });

  it("sends nothing for another source's conversion, a click without the id, no click, or a disabled postback", async () => {
    const p = path("none");
    const { who, cat } = await withPostback(p);
    // Another source of the tenant with the same parameter but no postback.
    const other = await createVia(t, who, "traffic-sources", { name: "Other" });
    await setPostback(t, who, other, "zid", null);
    const onOther = await recordConversion(t, who, {
      type: "Deposit",
      clickId: await clickOn(t, cat, other, "?zid=other-1"),
      value: 10,
      currency: "EUR",
    });
    expect(onOther.trafficSourceId).toBe(other);
    const withoutId = await recordConversion(t, who, {
      type: "Deposit",
      clickId: await clickOn(t, cat, cat.trafficSourceId, "?other=1"),
    });
    const emptyId = await recordConversion(t, who, {
      type: "Deposit",
      clickId: await clickOn(t, cat, cat.trafficSourceId, "?zid="),
    });
    const noClick = await recordConversion(t, who, { type: "Deposit" });
    const unattributed = await recordConversion(t, who, { type: "Deposit", clickId: "clk_not_of_this_tenant" });
    expect(unattributed.attributed).toBe(false);
    // Commissions are calculated and never fire.
    const commission = await recordConversion(t, who, {
      type: "CpaCommission",
      clickId: await clickOn(t, cat, cat.trafficSourceId, "?zid=c-1"),
      value: 5,
      currency: "EUR",
    });
    expect(commission.trafficSourceId).toBe(cat.trafficSourceId);
    expect(await postbacksOf(t, who, cat.trafficSourceId)).toEqual([]);
    expect(await postbacksOf(t, who, other)).toEqual([]);

    // Disabled: nothing is queued; enabled again, the next conversion is.
    await setPostback(t, who, cat.trafficSourceId, "zid", { url: template(p), enabled: false });
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=d-1");
    await recordConversion(t, who, { type: "Deposit", clickId });
    expect(await postbacksOf(t, who, cat.trafficSourceId)).toEqual([]);
    await setPostback(t, who, cat.trafficSourceId, "zid", { url: template(p) });
    const later = await recordConversion(t, who, { type: "Deposit", clickId });
    expect((await postbacksOf(t, who, cat.trafficSourceId)).map((q) => q.conversionId)).toEqual([later.id]);
    expect(await tick()).toBe(1);
    expect(rx.at(p).map((r) => r.query.get("conv"))).toEqual([later.id]);
    for (const id of [onOther.id, withoutId.id, emptyId.id, noClick.id]) expect(id).toMatch(/^cnv_/);
  });

  it("queues one postback per conversion of a batch, set-based", async () => {
    const p = path("batch");
    const { who, cat } = await withPostback(p);
    const clicks = [
      await clickOn(t, cat, cat.trafficSourceId, "?zid=b-1"),
      await clickOn(t, cat, cat.trafficSourceId, "?zid=b-2"),
      await clickOn(t, cat, cat.trafficSourceId),
    ];
    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { items: clicks.map((clickId) => ({ type: "Signup", clickId })) },
    });
    expect(res.statusCode, res.body).toBe(201);
    expect(res.json().data.created).toBe(3);
    expect(await postbacksOf(t, who, cat.trafficSourceId)).toHaveLength(2);
    expect(await tick()).toBe(2);
    expect(
      rx
        .at(p)
        .map((r) => r.query.get("sub"))
        .sort(),
    ).toEqual(["b-1", "b-2"]);
  });
});

describe("delivery: retries, the attempt log and resend", () => {
  it("retries about hourly, logs every attempt with the template, and fails after 10 attempts", async () => {
    const p = path("retry");
    const pFail = path("always-fails");
    const { who, cat } = await withPostback(p);
    rx.on(p, [{ status: 500, body: "down" }, "reset", { status: 204 }]);
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=r-1");
    await recordConversion(t, who, { type: "Deposit", clickId });
    const [queued] = await postbacksOf(t, who, cat.trafficSourceId);
    const id = queued?.id as string;

    expect(await tick()).toBe(1);
    expect((await postbacksOf(t, who, cat.trafficSourceId))[0]).toMatchObject({ status: "Retrying", attempts: 1 });
    // Not due again before about an hour has passed.
    t.clock.advance(HOUR_MS / 2);
    expect(await tick()).toBe(0);
    t.clock.advance(0.7 * HOUR_MS);
    expect(await tick()).toBe(1);
    expect((await postbacksOf(t, who, cat.trafficSourceId))[0]).toMatchObject({ status: "Retrying", attempts: 2 });
    t.clock.advance(1.2 * HOUR_MS);
    expect(await tick()).toBe(1);
    expect((await postbacksOf(t, who, cat.trafficSourceId))[0]).toMatchObject({ status: "Delivered", attempts: 3 });
    expect(rx.at(p)).toHaveLength(3);

    const attempts = await postbackAttempts(t, who, cat.trafficSourceId, id);
    expect(attempts.map((a) => a.attempt)).toEqual([1, 2, 3]);
    expect(attempts.map((a) => a.errorType)).toEqual(["http_status", expect.any(String), null]);
    expect(attempts[0]?.response).toMatchObject({ status: 500, body: "down" });
    expect(attempts[1]?.response).toBeNull();
    expect(attempts[2]?.response?.status).toBe(204);
    for (const attempt of attempts) {
      // The template, never the resolved URL (it may hold a receiver key).
      expect(attempt.urlTemplate).toBe(template(p));
      expect(attempt.method).toBe("GET");
    }

    // A receiver that never answers 2xx: ten attempts, then Failed.
    rx.on(pFail, { status: 503 });
    await setPostback(t, who, cat.trafficSourceId, "zid", { url: template(pFail) });
    await recordConversion(t, who, { type: "Deposit", clickId });
    const failing = (await postbacksOf(t, who, cat.trafficSourceId, "?status=Queued"))[0]?.id as string;
    for (let i = 0; i < 10; i++) {
      expect(await tick()).toBe(1);
      t.clock.advance(1.2 * HOUR_MS);
    }
    expect(await tick()).toBe(0);
    const [failed] = await postbacksOf(t, who, cat.trafficSourceId, "?status=Failed");
    expect(failed).toMatchObject({ id: failing, status: "Failed", attempts: 10 });
    expect(rx.at(pFail)).toHaveLength(10);
    expect(await postbackAttempts(t, who, cat.trafficSourceId, failing)).toHaveLength(10);

    // Resend: one more attempt, now answered 2xx.
    rx.on(pFail, { status: 200 });
    const resent = await resendPostback(t, who, cat.trafficSourceId, failing);
    expect(resent.statusCode, resent.body).toBe(200);
    expect(resent.json().data).toMatchObject({ id: failing, status: "Queued", attempts: 10 });
    expect(await tick()).toBe(1);
    expect((await postbacksOf(t, who, cat.trafficSourceId, `?status=Delivered`)).map((q) => q.id)).toContain(failing);
    expect(rx.at(pFail)).toHaveLength(11);
  });

  it("resends a delivered postback with the source's current URL", async () => {
    const p = path("resend");
    const p2 = path("resend-new");
    const { who, cat } = await withPostback(p, { payoutShare: 50 });
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=s-1");
    await recordConversion(t, who, { type: "Deposit", clickId, value: 3, currency: "USD" });
    expect(await tick()).toBe(1);
    const [delivered] = await postbacksOf(t, who, cat.trafficSourceId);
    expect(delivered?.status).toBe("Delivered");

    await setPostback(t, who, cat.trafficSourceId, "zid", { url: template(p2), payoutShare: 10 });
    const res = await resendPostback(t, who, cat.trafficSourceId, delivered?.id as string);
    expect(res.statusCode, res.body).toBe(200);
    expect(await tick()).toBe(1);
    // The values are those fixed when it was queued (payout at 50%), the URL the current one.
    expect(rx.at(p2).map((r) => [r.query.get("sub"), r.query.get("payout")])).toEqual([["s-1", "1.5"]]);
    expect((await postbacksOf(t, who, cat.trafficSourceId))[0]).toMatchObject({ status: "Delivered", attempts: 2 });

    const unknown = await resendPostback(t, who, cat.trafficSourceId, "tsp_unknown");
    expect(unknown.statusCode).toBe(404);
  });

  it("pauses postbacks while the postback is disabled and sends them once it is enabled again", async () => {
    const p = path("paused");
    const { who, cat } = await withPostback(p);
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=p-1");
    await recordConversion(t, who, { type: "Deposit", clickId });
    await setPostback(t, who, cat.trafficSourceId, "zid", { url: template(p), enabled: false });
    expect(await tick()).toBe(1);
    expect((await postbacksOf(t, who, cat.trafficSourceId))[0]).toMatchObject({ status: "Paused", attempts: 0 });
    expect(rx.at(p)).toEqual([]);
    await setPostback(t, who, cat.trafficSourceId, "zid", { url: template(p), enabled: true });
    expect((await postbacksOf(t, who, cat.trafficSourceId))[0]?.status).toBe("Queued");
    expect(await tick()).toBe(1);
    expect(rx.at(p).map((r) => r.query.get("sub"))).toEqual(["p-1"]);
  });

  it("lists with filters and pages", async () => {
    const p = path("list");
    const { who, cat } = await withPostback(p);
    rx.on(p, { status: 500 });
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=l-1");
    const first = await recordConversion(t, who, { type: "Deposit", clickId });
    const second = await recordConversion(t, who, { type: "Signup", clickId });
    const all = await getPostbacks(t, who, cat.trafficSourceId, "?limit=1");
    expect(all.statusCode, all.body).toBe(200);
    expect(all.json().pagination).toEqual({ offset: 0, limit: 1, total: 2 });
    // Newest first.
    expect(all.json().data[0].conversionId).toBe(second.id);
    expect((await postbacksOf(t, who, cat.trafficSourceId, `?conversionId=${first.id}`)).length).toBe(1);
    const day = t.clock.now().toISOString().slice(0, 10);
    expect(await postbacksOf(t, who, cat.trafficSourceId, `?dateFrom=${day}&dateTo=${day}`)).toHaveLength(2);
    expect(await postbacksOf(t, who, cat.trafficSourceId, "?dateTo=2001-01-01")).toEqual([]);
    expect(await postbacksOf(t, who, cat.trafficSourceId, "?status=Delivered")).toEqual([]);
    const bad = await getPostbacks(t, who, cat.trafficSourceId, "?status=Held");
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("status");
    const backwards = await getPostbacks(t, who, cat.trafficSourceId, "?dateFrom=2026-02-02&dateTo=2026-02-01");
    expect(backwards.statusCode).toBe(400);
    expect(backwards.json().message).toContain("dateTo");
  });
});

describe("metering and tenancy", () => {
  it("never counts postbacks against the webhook allowance, even when it is used up", async () => {
    const p = path("unmetered");
    const pHook = path("metered-hook");
    const { who, cat } = await withPostback(p);
    const admin = { authorization: `Bearer ${ADMIN_KEY}` };
    const patched = await t.call({
      method: "PATCH",
      url: `/api/admin/tenants/${who.tenantId}`,
      headers: admin,
      payload: { webhookAllowance: 0 },
    });
    expect(patched.statusCode, patched.body).toBe(200);
    const hook = await createHook(t, who, { url: `${rx.base}${pHook}` });
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=m-1");
    const conversion = await recordConversion(t, who, { type: "Deposit", clickId });

    expect(await tick()).toBe(1);
    expect((await postbacksOf(t, who, cat.trafficSourceId))[0]?.status).toBe("Delivered");
    // The webhook of the same conversion is held by the used-up allowance; the postback was not.
    await t.ctx.delivery.tick();
    expect((await eventOf(t, who, conversion.id, hook.id)).status).toBe("Held");
    const month = t.clock.now().toISOString().slice(0, 7);
    const usage = await t.call({
      method: "GET",
      url: `/api/admin/tenants/${who.tenantId}/webhook-usage?month=${month}`,
      headers: admin,
    });
    expect(usage.statusCode, usage.body).toBe(200);
    expect(usage.json().data.sent).toBe(0);
    expect(rx.at(pHook)).toEqual([]);
    expect(rx.at(p)).toHaveLength(1);
    await t.ctx.db.query("update webhook_events set status = 'Cancelled' where tenant_id = $1", [who.tenantId]);
  });

  it("keeps each tenant's postbacks to itself", async () => {
    const p = path("tenant-a");
    const a = await withPostback(p);
    const b = await seedTenantWithCatalog(t);
    const clickId = await clickOn(t, a.cat, a.cat.trafficSourceId, "?zid=iso-1");
    await recordConversion(t, a.who, { type: "Deposit", clickId });
    const [mine] = await postbacksOf(t, a.who, a.cat.trafficSourceId);
    const id = mine?.id as string;

    // B's conversion naming A's click is not attributed to it: no postback to A's source.
    const theirs = await recordConversion(t, b.who, { type: "Deposit", clickId });
    expect(theirs.attributed).toBe(false);
    expect(await postbacksOf(t, a.who, a.cat.trafficSourceId)).toHaveLength(1);

    // A's source and postback are not found from B, through B's own source either.
    expect((await getPostbacks(t, b.who, a.cat.trafficSourceId)).statusCode).toBe(404);
    expect((await resendPostback(t, b.who, a.cat.trafficSourceId, id)).statusCode).toBe(404);
    expect((await resendPostback(t, b.who, b.cat.trafficSourceId, id)).statusCode).toBe(404);
    const attempts = await t.call({
      method: "GET",
      url: `/api/v1/traffic-sources/${b.cat.trafficSourceId}/postbacks/${id}/attempts`,
      headers: { authorization: b.who.apiKey },
    });
    expect(attempts.statusCode).toBe(404);
    expect(await postbacksOf(t, b.who, b.cat.trafficSourceId)).toEqual([]);
    // B cannot read or change A's source settings either.
    const patch = await t.call({
      method: "PATCH",
      url: `/api/v1/traffic-sources/${a.cat.trafficSourceId}`,
      headers: { authorization: b.who.apiKey },
      payload: { postback: null },
    });
    expect(patch.statusCode).toBe(404);
    expect(await tick()).toBe(1);
    expect(rx.at(p)).toHaveLength(1);
  });
});

describe("the worker loop", () => {
  it("sends a new postback as soon as the conversion's transaction announces it", async () => {
    const loop = sourcePostbackWorker({ db: t.ctx.db, clock: t.ctx.clock, log: t.app.log, config: t.ctx.config });
    await loop.start();
    try {
      const p = path("loop");
      const { who, cat } = await withPostback(p);
      const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=loop-1");
      const conversion = await recordConversion(t, who, { type: "Deposit", clickId });
      // Well inside the idle poll's second would also pass; the wake-up is what makes it prompt.
      const got = await rx.waitFor(p, 5_000);
      expect(got.query.get("conv")).toBe(conversion.id);
      await expect
        .poll(async () => (await postbacksOf(t, who, cat.trafficSourceId))[0]?.status, { timeout: 5_000 })
        .toBe("Delivered");
    } finally {
      await loop.stop();
    }
  });
});

describe("retention", () => {
  it("purges finished postbacks with their attempts 120 days on, and keeps those still waiting", async () => {
    const delivered = path("retention-ok");
    const failing = path("retention-failing");
    rx.on(failing, { status: 500 });
    const good = await withPostback(delivered);
    const bad = await withPostback(failing);
    const start = t.clock.now();
    for (const { who, cat } of [good, bad]) {
      const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=kept-1");
      await recordConversion(t, who, { type: "Deposit", clickId });
    }
    expect(await tick()).toBe(2);
    const [done] = await postbacksOf(t, good.who, good.cat.trafficSourceId);
    const [retrying] = await postbacksOf(t, bad.who, bad.cat.trafficSourceId);
    expect(done).toMatchObject({ status: "Delivered", attempts: 1 });
    expect(retrying).toMatchObject({ status: "Retrying", attempts: 1 });
    const attemptsOf = async (id: string) =>
      (
        await t.ctx.db.query<{ n: number }>(
          "select count(*)::int as n from source_postback_attempts where postback_id = $1",
          [id],
        )
      )[0]?.n;

    const job = t.ctx.jobs.find("retention");
    if (!job) throw new Error("no retention job");
    // 119 days on: both stay.
    await job.run(new Date(start.getTime() + 119 * DAY_MS));
    expect(await postbacksOf(t, good.who, good.cat.trafficSourceId)).toHaveLength(1);
    // 121 days on: the delivered one goes with its attempt; the one still waiting stays.
    await job.run(new Date(start.getTime() + 121 * DAY_MS));
    expect(await postbacksOf(t, good.who, good.cat.trafficSourceId)).toEqual([]);
    expect(await attemptsOf(done?.id as string)).toBe(0);
    expect(await postbacksOf(t, bad.who, bad.cat.trafficSourceId)).toEqual([retrying]);
    expect(await attemptsOf(retrying?.id as string)).toBe(1);
  });
});
