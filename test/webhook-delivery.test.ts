/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { claimDue, deliver } from "../src/features/outgoing-webhooks/delivery.js";
import type { Attempt, DeliveryEvent as Event } from "../src/features/outgoing-webhooks/event-service.js";
import { DeliveryWorker } from "../src/features/outgoing-webhooks/worker.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import { AddressPolicy } from "../src/platform/webhook-sender.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, createVia } from "./helpers/catalog.js";
import { closedPort, type Receiver, selfSignedCertificate, startReceiver } from "./helpers/receiver.js";
import {
  attemptsOf,
  type Conversion,
  cancelWaitingEvents,
  conversionsAt,
  createHook,
  eventOf,
  eventsOf,
  getEvent,
  listEvents,
  PAYLOAD_KEYS,
  patchHook,
  receiverPaths,
  recordConversion,
  seedTenantWithCatalog,
  setClickWebhooks,
  startWebhookTestApp,
  suspendHook,
  WEBHOOKS_API,
  withId,
} from "./helpers/webhooks.js";

// Outgoing conversion webhooks, from the conversion to what a real loopback receiver gets
// (docs/outgoing-webhooks.md): fan-out,
// the request, failures and retries, leases, the attempt log, the events API and the worker loop.

const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36";
const EVENT_KEYS = [
  "attempts",
  "clickId",
  "conversionId",
  "conversionType",
  "createdAt",
  "id",
  "lastAttemptAt",
  "nextAttemptAt",
  "simulated",
  "status",
  "webhookId",
];

let t: TestApp;
let rx: Receiver;
/** Tenants whose pending events outlive a test (a describe's shared fixture). */
const keepPending = new Set<string>();

beforeAll(async () => {
  // Clicks stay in the buffer until a conversion needs them; nothing writes them on a timer.
  t = await startWebhookTestApp({ app: { clicks: { intervalMs: 3_600_000 } } });
  rx = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
afterEach(() => cancelWaitingEvents(t, { keep: keepPending }));

const path = receiverPaths("/r");

/** A click through /go; returns its id read from the redirect. */
async function click(cat: CatalogFixture, query = "", sourceId = cat.trafficSourceId): Promise<string> {
  const res = await t.call({
    method: "GET",
    url: `/go/${cat.linkId}/${sourceId}${query}`,
    headers: { "user-agent": BROWSER },
  });
  expect(res.statusCode, res.body).toBe(302);
  return new URL(String(res.headers.location)).searchParams.get("cid") as string;
}

const tick = () => t.ctx.delivery.tick();

describe("fan-out: which conversions create delivery events", () => {
  it("fires an affiliate-level webhook for every conversion and a source webhook only for its source", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const otherSource = await createVia(t, who, "traffic-sources", { name: "Other source" });
    const [pAff, pSrc, pOther] = [path("affiliate"), path("source"), path("other-source")];
    const affiliate = await createHook(t, who, { url: withId(rx, pAff) });
    const bound = await createHook(t, who, { url: withId(rx, pSrc), trafficSourceId: cat.trafficSourceId });
    const boundOther = await createHook(t, who, { url: withId(rx, pOther), trafficSourceId: otherSource });

    const onSource = await recordConversion(t, who, { type: "Signup", clickId: await click(cat) });
    expect(onSource.trafficSourceId).toBe(cat.trafficSourceId);
    const unattributed = await recordConversion(t, who, { type: "Signup", clickId: "clk_unknown_to_this_tenant" });
    expect(unattributed.attributed).toBe(false);
    const noClick = await recordConversion(t, who, { type: "Signup" });
    const onOther = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, "", otherSource) });

    // Both match the first conversion: two events, the receiver gets it twice.
    const hooksOf = async (id: string) => (await eventsOf(t, who, id)).map((e) => e.webhookId).sort();
    expect(await hooksOf(onSource.id)).toEqual([affiliate.id, bound.id].sort());
    expect(await hooksOf(unattributed.id)).toEqual([affiliate.id]);
    expect(await hooksOf(noClick.id)).toEqual([affiliate.id]);
    expect(await hooksOf(onOther.id)).toEqual([affiliate.id, boundOther.id].sort());
    for (const event of await listEvents(t, who)) expect(event.status).toBe("Queued");

    expect(await tick()).toBe(6);
    expect(conversionsAt(rx, pAff).sort()).toEqual([onSource.id, unattributed.id, noClick.id, onOther.id].sort());
    expect(conversionsAt(rx, pSrc)).toEqual([onSource.id]);
    expect(conversionsAt(rx, pOther)).toEqual([onOther.id]);
    for (const event of await listEvents(t, who)) expect(event.status).toBe("Delivered");
  });

  it("creates no event for a Disabled webhook and sends nothing to it", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("disabled");
    const hook = await createHook(t, who, { url: withId(rx, p), status: "Disabled" });
    const conversion = await recordConversion(t, who, {
      type: "Deposit",
      clickId: await click(cat),
      value: 5,
      currency: "EUR",
    });
    expect(await eventsOf(t, who, conversion.id)).toEqual([]);
    expect(await listEvents(t, who, `?webhookId=${hook.id}`)).toEqual([]);
    await tick();
    expect(rx.at(p)).toEqual([]);
  });

  it("creates a Paused event for a Suspended webhook and never sends it", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("suspended");
    const hook = await createHook(t, who, { url: withId(rx, p) });
    await suspendHook(t, hook.id);
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const event = await eventOf(t, who, conversion.id);
    expect(event).toMatchObject({ webhookId: hook.id, status: "Paused", attempts: 0, nextAttemptAt: null });
    await tick();
    t.clock.advance(2 * HOUR_MS);
    await tick();
    expect(rx.at(p)).toEqual([]);
    expect(await getEvent(t, who, event.id)).toMatchObject({ status: "Paused", attempts: 0, lastAttemptAt: null });
    expect(await attemptsOf(t, who, event.id)).toEqual([]);
  });

  it("pauses a queued event, unsent, when its webhook is suspended before delivery", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("suspended-later");
    const hook = await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    expect((await eventOf(t, who, conversion.id)).status).toBe("Queued");
    await t.ctx.db.query("update outgoing_webhooks set status = 'Suspended' where id = $1", [hook.id]);
    await tick();
    expect(rx.at(p)).toEqual([]);
    expect(await eventOf(t, who, conversion.id)).toMatchObject({ status: "Paused", attempts: 0 });
  });

  it("fires every eligible type with an empty type filter, only listed types otherwise, never commissions", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const [pAll, pDeposit] = [path("all-types"), path("deposit-only")];
    const all = await createHook(t, who, { url: withId(rx, pAll) });
    const depositOnly = await createHook(t, who, {
      url: withId(rx, pDeposit),
      conversionTypes: ["Deposit", "Qualifier"],
    });
    const ids: Record<string, string> = {};
    for (const type of ["Signup", "FirstTimeDeposit", "Qualifier", "Deposit"]) {
      ids[type] = (await recordConversion(t, who, { type, value: 10, currency: "EUR" })).id;
    }
    for (const type of ["CpaCommission", "RevShareCommission", "FlatFeeCommission"]) {
      const commission = await recordConversion(t, who, { type, value: 10, currency: "EUR" });
      expect(await eventsOf(t, who, commission.id), type).toEqual([]);
    }
    await tick();
    expect(conversionsAt(rx, pAll).sort()).toEqual(Object.values(ids).sort());
    expect(conversionsAt(rx, pDeposit).sort()).toEqual([ids.Qualifier, ids.Deposit].sort());
    expect((await listEvents(t, who, `?webhookId=${all.id}`)).length).toBe(4);
    expect((await listEvents(t, who, `?webhookId=${depositOnly.id}`)).length).toBe(2);
  });

  // Click postbacks come from clicks through /go (test/webhook-click-postbacks.test.ts, the
  // entitlement included); a Click is not a conversion a caller records (docs/conversions.md).
  it("a Click posted to the API is refused and fires nothing, even with click webhooks on", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const [pAll, pClick] = [path("all"), path("click")];
    await setClickWebhooks(t, who, true);
    await createHook(t, who, { url: withId(rx, pAll) });
    await createHook(t, who, { url: withId(rx, pClick), conversionTypes: ["Click"] });
    const res = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Click" },
    });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().data.errors[0].path).toBe("type");
    expect(await listEvents(t, who)).toEqual([]);
    await tick();
    expect(rx.at(pAll)).toEqual([]);
    expect(rx.at(pClick)).toEqual([]);
  });

  it("fires only for the attribution sources in the webhook's filter", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const [pMeta, pDirect, pAny] = [path("meta"), path("direct"), path("any")];
    await createHook(t, who, { url: withId(rx, pMeta), attributionSources: ["meta", "microsoft"] });
    await createHook(t, who, { url: withId(rx, pDirect), attributionSources: ["direct"] });
    await createHook(t, who, { url: withId(rx, pAny) });
    const meta = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, "?fbclid=FB-1") });
    const google = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, "?gclid=G-1") });
    const microsoft = await recordConversion(t, who, { type: "Signup", clickId: await click(cat, "?msclkid=M-1") });
    const direct = await recordConversion(t, who, { type: "Signup" });
    await tick();
    expect(conversionsAt(rx, pMeta).sort()).toEqual([meta.id, microsoft.id].sort());
    expect(conversionsAt(rx, pDirect)).toEqual([direct.id]);
    expect(conversionsAt(rx, pAny).sort()).toEqual([meta.id, google.id, microsoft.id, direct.id].sort());
  });

  it("writes no event for a repeated externalId (nothing new recorded or sent)", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("dup");
    await createHook(t, who, { url: withId(rx, p) });
    const first = await recordConversion(t, who, { type: "Signup", externalId: "ext-dup-1" });
    const again = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: who.apiKey },
      payload: { type: "Signup", externalId: "ext-dup-1" },
    });
    expect(again.statusCode).toBe(200);
    expect(again.json().data).toMatchObject({ id: first.id, duplicate: true });
    expect(await listEvents(t, who)).toHaveLength(1);
    await tick();
    expect(conversionsAt(rx, p)).toEqual([first.id]);
  });

  it("writes events in the conversion's transaction: a batch that fails writes no event", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("tx");
    await createHook(t, who, { url: withId(rx, p) });
    const post = (items: Record<string, unknown>[]) =>
      t.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: who.apiKey },
        payload: { items },
      });

    const invalid = await post([{ type: "Signup" }, { type: "Deposit", value: 5, currency: "EURO" }]);
    expect(invalid.statusCode).toBe(400);
    expect(invalid.json().message).toContain("items[1].currency");

    // A failure inside the database after the first item's events were written: the constraint
    // refuses the second conversion, and the first one's event must go with the rollback.
    await t.ctx.db.query(
      "alter table conversions add constraint test_refuses_boom check (event_name <> 'boom-rollback')",
    );
    try {
      const failed = await post([
        { type: "Signup", eventName: "fine" },
        { type: "Signup", eventName: "boom-rollback" },
      ]);
      expect(failed.statusCode).toBe(500);
    } finally {
      await t.ctx.db.query("alter table conversions drop constraint test_refuses_boom");
    }
    expect(await listEvents(t, who)).toEqual([]);
    const [row] = await t.ctx.db.query<{ n: number }>(
      "select count(*)::int as n from conversions where tenant_id = $1",
      [who.tenantId],
    );
    expect(row?.n).toBe(0);
    await tick();
    expect(rx.at(p)).toEqual([]);

    // The same batch, valid, writes one event per conversion.
    const ok = await post([{ type: "Signup" }, { type: "Deposit", value: 5, currency: "EUR" }]);
    expect(ok.statusCode).toBe(201);
    expect(await listEvents(t, who)).toHaveLength(2);
  });
});

describe("delivery: the request the receiver gets", () => {
  /** Header names undici itself writes; anything else would be a custom or auth header. */
  const TRANSPORT_HEADERS = ["connection", "content-length", "host", "transfer-encoding"];

  it("POSTs the conversion payload as JSON, with the custom event name, and no other headers", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("post");
    const hook = await createHook(t, who, {
      url: `${rx.base}${p}?event=\${eventName}`,
      method: "POST",
      eventNames: { Deposit: "purchase & more" },
    });
    const clickId = await click(cat, "?gclid=G-42&fbclid=F-42&pa=alpha&pb=beta&ext=EXT-42");
    const clickDate = t.clock.now().toISOString();
    const view = await t.call({
      method: "POST",
      url: "/collect",
      payload: { clickId, url: "https://brand.example/landing", title: "Landing", referrer: "https://ads.example/" },
    });
    expect(view.statusCode, view.body).toBe(201);
    const viewedAt = t.clock.now().toISOString();
    t.clock.advance(60_000);
    const conversion = await recordConversion(t, who, {
      type: "Deposit",
      clickId,
      value: 25.5,
      currency: "EUR",
      eventName: "dep",
    });
    await tick();

    const [got] = rx.at(p);
    expect(rx.at(p)).toHaveLength(1);
    expect(got?.method).toBe("POST");
    expect(got?.query.get("event")).toBe("purchase & more");
    expect(got?.headers["content-type"]).toBe("application/json");
    const extra = Object.keys(got?.headers ?? {}).filter((h) => h !== "content-type" && !TRANSPORT_HEADERS.includes(h));
    expect(extra).toEqual([]);
    const payload = JSON.parse(got?.body ?? "null");
    expect(Object.keys(payload).sort()).toEqual(PAYLOAD_KEYS);
    expect(payload).toEqual({
      conversionId: conversion.id,
      conversionType: "Deposit",
      eventName: "purchase & more",
      eventValue: 25.5,
      currency: "EUR",
      eventTime: conversion.occurredAt,
      clickId,
      clickDate,
      account: { id: cat.accountId, name: "Account" },
      brand: { id: cat.brandId, name: "Brand" },
      program: { id: cat.programId, name: "Program" },
      trafficSource: { id: cat.trafficSourceId, name: "Source" },
      attribution: {
        gclid: "G-42",
        fbclid: "F-42",
        parameterA: "alpha",
        parameterB: "beta",
        externalClickId: "EXT-42",
      },
      pageViews: [
        { url: "https://brand.example/landing", title: "Landing", referrer: "https://ads.example/", at: viewedAt },
      ],
    });
    expect((await listEvents(t, who, `?webhookId=${hook.id}`))[0]?.status).toBe("Delivered");
  });

  it("sends null for every value an unattributed conversion lacks, and its own event name without a custom one", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("post-nulls");
    await createHook(t, who, { url: `${rx.base}${p}`, method: "POST", eventNames: { Deposit: "purchase" } });
    const conversion = await recordConversion(t, who, { type: "Signup", clickId: "clk_nobody_knows" });
    await tick();
    expect(rx.at(p)).toHaveLength(1);
    expect(JSON.parse(rx.at(p)[0]?.body ?? "null")).toEqual({
      conversionId: conversion.id,
      conversionType: "Signup",
      eventName: "Signup",
      eventValue: null,
      currency: null,
      eventTime: conversion.occurredAt,
      clickId: "clk_nobody_knows",
      clickDate: null,
      account: null,
      brand: null,
      program: null,
      trafficSource: null,
      attribution: { gclid: null, fbclid: null, parameterA: null, parameterB: null, externalClickId: null },
      pageViews: [],
    });
  });

  it("sends a GET without a body and renders placeholders encoded or raw, case-insensitively", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("get");
    const template =
      `${rx.base}${p}?click=\${clickId}&name={{eventName}}&raw={{{parameterA}}}&enc=\${parameterA}` +
      "&ua=${clientUserAgent}&g=${GCLID}&missing=${msclkid}&ts=${eventTimeStamp}&brand=${brandId}" +
      "&src={{ trafficSource }}&value=${eventValue}&cur=${currencyCode}";
    await createHook(t, who, { url: template, method: "GET", eventNames: { Qualifier: "Big Win" } });
    // pa arrives as the value "x%2Fy&z": raw keeps it as it is, encoded escapes it again.
    const clickId = await click(cat, "?gclid=G-7&pa=x%252Fy");
    const conversion = await recordConversion(t, who, { type: "Qualifier", clickId, value: 12.5, currency: "GBP" });
    await tick();

    expect(rx.at(p)).toHaveLength(1);
    const got = rx.at(p)[0];
    expect(got?.method).toBe("GET");
    expect(got?.body).toBe("");
    expect(got?.headers["content-type"]).toBeUndefined();
    expect(got?.headers["content-length"] ?? "0").toBe("0");
    const extra = Object.keys(got?.headers ?? {}).filter((h) => !TRANSPORT_HEADERS.includes(h));
    expect(extra).toEqual([]);
    const expectedQuery = [
      `click=${clickId}`,
      "name=Big%20Win",
      "raw=x%2Fy",
      "enc=x%252Fy",
      `ua=${encodeURIComponent(BROWSER)}`,
      "g=G-7",
      "missing=",
      `ts=${Math.floor(Date.parse(conversion.occurredAt) / 1000)}`,
      `brand=${cat.brandId}`,
      "src=Source",
      "value=12.5",
      "cur=GBP",
    ].join("&");
    expect(got?.url).toBe(`${p}?${expectedQuery}`);
  });

  it("uses the webhook's current URL at each attempt: a retry goes to the URL saved since", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const [pOld, pNew] = [path("old"), path("new")];
    rx.on(pOld, { status: 503 });
    const oldTemplate = withId(rx, pOld);
    const newTemplate = withId(rx, pNew);
    const hook = await createHook(t, who, { url: oldTemplate });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    expect((await eventOf(t, who, conversion.id)).status).toBe("Retrying");

    await patchHook(t, who, hook.id, { url: newTemplate });
    t.clock.advance(1.2 * HOUR_MS);
    await tick();
    expect(conversionsAt(rx, pOld)).toEqual([conversion.id]);
    expect(conversionsAt(rx, pNew)).toEqual([conversion.id]);
    const event = await eventOf(t, who, conversion.id);
    expect(event).toMatchObject({ status: "Delivered", attempts: 2 });
    expect((await attemptsOf(t, who, event.id)).map((a) => a.urlTemplate)).toEqual([oldTemplate, newTemplate]);
  });

  it("does not follow a redirect: a 302 is a failed attempt (http_status)", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const [p, target] = [path("redirect"), path("redirect-target")];
    rx.on(p, { status: 302, headers: { location: `${rx.base}${target}` } });
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    expect(rx.at(p)).toHaveLength(1);
    expect(rx.at(target)).toEqual([]);
    const event = await eventOf(t, who, conversion.id);
    expect(event.status).toBe("Retrying");
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt).toMatchObject({ errorType: "http_status", response: { status: 302 } });
  });
});

describe("failures and retries", () => {
  /** One conversion to a fresh webhook at `url`; delivers it once and returns the event and its attempt. */
  async function failOnce(url: string): Promise<{ who: Tenancy; event: Event; attempt: Attempt }> {
    const { who } = await seedTenantWithCatalog(t);
    await createHook(t, who, { url });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    const event = await eventOf(t, who, conversion.id);
    const attempts = await attemptsOf(t, who, event.id);
    expect(attempts).toHaveLength(1);
    return { who, event, attempt: attempts[0] as Attempt };
  }

  it("retries a 5xx about one interval later and then delivers", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("flaky");
    rx.on(p, [{ status: 503, body: "busy" }, { status: 200 }]);
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const first = t.clock.now().getTime();
    await tick();

    const retrying = await eventOf(t, who, conversion.id);
    expect(retrying).toMatchObject({ status: "Retrying", attempts: 1, lastAttemptAt: new Date(first).toISOString() });
    const next = Date.parse(retrying.nextAttemptAt ?? "");
    expect(next).toBeGreaterThanOrEqual(first + 0.9 * HOUR_MS);
    expect(next).toBeLessThanOrEqual(first + 1.1 * HOUR_MS);

    // Not due yet: nothing is sent.
    await tick();
    t.clock.advance(0.89 * HOUR_MS);
    await tick();
    expect(rx.at(p)).toHaveLength(1);

    t.clock.set(new Date(next));
    await tick();
    expect(rx.at(p)).toHaveLength(2);
    expect(await eventOf(t, who, conversion.id)).toMatchObject({
      status: "Delivered",
      attempts: 2,
      lastAttemptAt: new Date(next).toISOString(),
      nextAttemptAt: null,
    });
  });

  it("classifies a receiver that hangs past the timeout as timeout", async () => {
    const p = path("hang");
    rx.on(p, "hang");
    const { event, attempt } = await failOnce(`${rx.base}${p}`);
    expect(rx.at(p)).toHaveLength(1);
    expect(event.status).toBe("Retrying");
    expect(attempt).toMatchObject({ errorType: "timeout", response: null });
    expect(attempt.error).toEqual(expect.any(String));
    expect(attempt.durationMs).toBeGreaterThanOrEqual(450);
    expect(attempt.durationMs).toBeLessThan(2000);
  });

  it("gives up on a receiver that answers at once but never finishes its body (timeout)", async () => {
    const p = path("trickle");
    rx.on(p, "trickle");
    const { event, attempt } = await failOnce(`${rx.base}${p}`);
    expect(rx.at(p)).toHaveLength(1);
    expect(event.status).toBe("Retrying");
    expect(attempt.errorType).toBe("timeout");
    expect(attempt.durationMs).toBeLessThan(2000);
  });

  // The receiver's body is stored in jsonb, which cannot hold U+0000: unless deliver
  // (src/features/outgoing-webhooks/delivery.ts) cleans it, the attempt's transaction fails,
  // nothing is logged, and the event is sent again every time its lease runs out, past the
  // 10-attempt cap.
  it("logs a 2xx whose body holds a NUL character and sends it only once", async () => {
    const p = path("nul-body");
    rx.on(p, { status: 200, body: "ok\u0000done" });
    const { who } = await seedTenantWithCatalog(t);
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    for (let i = 0; i < 3; i++) {
      t.clock.advance(HOUR_MS);
      await tick();
    }
    expect(rx.at(p)).toHaveLength(1);
    const event = await eventOf(t, who, conversion.id);
    expect(event).toMatchObject({ status: "Delivered", attempts: 1 });
    expect(await attemptsOf(t, who, event.id)).toHaveLength(1);
  });

  it("classifies a host name that does not resolve as dns", async () => {
    const { event, attempt } = await failOnce("http://no-such-receiver.invalid/pb");
    expect(event.status).toBe("Retrying");
    expect(attempt).toMatchObject({ errorType: "dns", response: null });
  });

  it("classifies a closed port as connection_refused", async () => {
    const { event, attempt } = await failOnce(`http://127.0.0.1:${await closedPort()}/nobody`);
    expect(event.status).toBe("Retrying");
    expect(attempt).toMatchObject({ errorType: "connection_refused", response: null });
    expect(attempt.error).toMatch(/ECONNREFUSED/);
  });

  it("classifies a reset connection as connection_refused", async () => {
    const p = path("reset");
    rx.on(p, "reset");
    const { event, attempt } = await failOnce(`${rx.base}${p}`);
    expect(rx.at(p)).toHaveLength(1);
    expect(event.status).toBe("Retrying");
    expect(attempt).toMatchObject({ errorType: "connection_refused", response: null });
  });

  it("refuses a self-signed certificate as tls, sending no request", async () => {
    const https = await startReceiver({ tls: await selfSignedCertificate() });
    try {
      const { event, attempt } = await failOnce(`${https.base}/secure?c=\${conversionId}`);
      expect(event.status).toBe("Retrying");
      expect(attempt).toMatchObject({ errorType: "tls", response: null });
      expect(https.requests).toEqual([]);
      // The receiver was reached: the sender broke off at the certificate, before any request.
      expect(https.connections).toBeGreaterThan(0);
    } finally {
      await https.close();
    }
  });

  it("records a non-2xx answer as http_status with the receiver's response", async () => {
    const p = path("500");
    rx.on(p, { status: 500, body: "boom", headers: { "x-receiver": "r1" } });
    const { attempt } = await failOnce(`${rx.base}${p}`);
    expect(attempt.errorType).toBe("http_status");
    expect(attempt.error).toContain("500");
    expect(attempt.response).toMatchObject({ status: 500, body: "boom", headers: { "x-receiver": "r1" } });
  });

  it.each([
    ["a bare placeholder", "${clickId}"],
    ["a scheme that is not http", "{{{conversionType}}}://receiver.example/x"],
  ])("classifies a stored URL that renders to garbage (%s) as invalid_url", async (_label, template) => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("never");
    const hook = await createHook(t, who, { url: `${rx.base}${p}` });
    // Saved before save-time validation existed: only SQL can write it now.
    await t.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1", [hook.id, template]);
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    expect(rx.at(p)).toEqual([]);
    const event = await eventOf(t, who, conversion.id);
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt).toMatchObject({ errorType: "invalid_url", response: null, urlTemplate: template });
  });

  it("refuses a private address as blocked_address even with loopback allowed", async () => {
    for (const url of ["http://10.0.0.1/pb", "http://169.254.169.254/latest/meta-data", "http://[fd00::1]/pb"]) {
      // Refused at save now (integrator-webhooks.test.ts): a URL stored before that is still
      // refused at send, which only SQL can set up.
      const { who } = await seedTenantWithCatalog(t);
      const hook = await createHook(t, who, { url: "https://receiver.example/pb" });
      await t.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1", [hook.id, url]);
      const conversion = await recordConversion(t, who, { type: "Signup" });
      await tick();
      const event = await eventOf(t, who, conversion.id);
      const [attempt, ...more] = await attemptsOf(t, who, event.id);
      expect(more).toEqual([]);
      expect(attempt, url).toMatchObject({ errorType: "blocked_address", response: null });
    }
  });

  it("refuses loopback, by address and by a name resolving to it, without WEBHOOK_ALLOWED_HOSTS", async () => {
    const strict = await startTestApp({ env: { WEBHOOK_TIMEOUT_MS: "500" } });
    try {
      const who = await seedTenancy(strict);
      const p = path("strict");
      const urls = [
        `${rx.base}${p}`,
        `http://localhost:${rx.port}${p}`,
        `http://[::ffff:127.0.0.1]:${rx.port}${p}`,
        `http://[::1]:${rx.port}${p}`,
      ];
      for (const url of urls) {
        // Refused at save now (integrator-webhooks.test.ts); the send-time screen still guards
        // a URL stored before that, which only SQL can set up.
        const res = await strict.call({
          method: "POST",
          url: `${WEBHOOKS_API}/settings`,
          headers: { authorization: who.apiKey },
          payload: { name: "Loopback", url: "https://receiver.example/pb", method: "GET" },
        });
        expect(res.statusCode, res.body).toBe(201);
        await strict.ctx.db.query("update outgoing_webhooks set url = $2 where id = $1", [res.json().data.id, url]);
      }
      const recorded = await strict.call({
        method: "POST",
        url: "/api/v1/conversions",
        headers: { authorization: who.apiKey },
        payload: { type: "Signup" },
      });
      expect(recorded.statusCode).toBe(201);
      expect(await strict.ctx.delivery.tick()).toBe(urls.length);
      const rows = await strict.ctx.db.query<{ url_template: string; error_type: string; response: unknown }>(
        "select url_template, error_type, response from webhook_attempts order by url_template",
      );
      expect(rows.map((r) => r.url_template).sort()).toEqual([...urls].sort());
      for (const row of rows)
        expect(row, row.url_template).toMatchObject({ error_type: "blocked_address", response: null });
      expect(rx.at(p)).toEqual([]);
    } finally {
      await strict.close();
    }
  });

  it("gives up after 10 failed attempts: Failed, and nothing more is sent", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("always-500");
    rx.on(p, { status: 500 });
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    for (let attempt = 1; attempt <= 10; attempt++) {
      await tick();
      const event = await eventOf(t, who, conversion.id);
      expect(event.attempts).toBe(attempt);
      expect(event.status).toBe(attempt < 10 ? "Retrying" : "Failed");
      t.clock.advance(1.2 * HOUR_MS);
    }
    expect(rx.at(p)).toHaveLength(10);
    const failed = await eventOf(t, who, conversion.id);
    expect(failed.nextAttemptAt).toBeNull();
    t.clock.advance(DAY_MS);
    await tick();
    expect(rx.at(p)).toHaveLength(10);
    expect((await attemptsOf(t, who, failed.id)).map((a) => a.attempt)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9, 10]);
  });

  it("stops retrying an event when the next try would fall after 10 days: Failed", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("old-event");
    rx.on(p, { status: 502 });
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const created = t.clock.now().getTime();
    await tick();
    expect((await eventOf(t, who, conversion.id)).status).toBe("Retrying");

    // The retry ran late (workers were down): it is tried once more, and the one after would
    // be past ten days since the event was created.
    t.clock.set(new Date(created + 10 * DAY_MS - 30 * 60_000));
    await tick();
    expect(rx.at(p)).toHaveLength(2);
    expect(await eventOf(t, who, conversion.id)).toMatchObject({ status: "Failed", attempts: 2, nextAttemptAt: null });
    t.clock.advance(2 * HOUR_MS);
    await tick();
    expect(rx.at(p)).toHaveLength(2);
  });
});

describe("leases", () => {
  const settings = () => ({
    timeoutMs: 500,
    retryIntervalMs: HOUR_MS,
    policy: new AddressPolicy(["127.0.0.1"]),
  });

  it("does not let a second worker take an event while its lease holds, but does once it ran out", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("lease");
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const event = await eventOf(t, who, conversion.id);

    // A worker claims it with a short lease and then dies.
    const claim = await claimDue(t.ctx.db, t.clock.now(), 64, 5_000);
    const held = claim.events.find((e) => e.id === event.id);
    expect(held).toBeDefined();
    expect(await tick()).toBe(0);
    t.clock.advance(4_000);
    expect(await tick()).toBe(0);
    expect(rx.at(p)).toEqual([]);

    t.clock.advance(2_000);
    expect(await tick()).toBe(1);
    expect(conversionsAt(rx, p)).toEqual([conversion.id]);
    expect(await getEvent(t, who, event.id)).toMatchObject({ status: "Delivered", attempts: 1 });

    // The stale holder wakes up and tries: it may send and its attempt is logged, but it
    // cannot write the outcome over the new holder's (here a failure over a delivery).
    rx.on(p, { status: 500 });
    const outcome = await deliver(t.ctx.db, held as NonNullable<typeof held>, claim.token, settings(), () =>
      t.clock.now(),
    );
    expect(outcome).toBe("stale");
    expect(rx.at(p)).toHaveLength(2);
    expect(await getEvent(t, who, event.id)).toMatchObject({ status: "Delivered", attempts: 1, nextAttemptAt: null });
    const attempts = await attemptsOf(t, who, event.id);
    expect(attempts).toHaveLength(2);
    expect(attempts.map((a) => a.errorType).sort()).toEqual(["http_status", null].sort());
  });

  it("lets the holder of the current lease record the outcome", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("holder");
    await createHook(t, who, { url: withId(rx, p) });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const claim = await claimDue(t.ctx.db, t.clock.now(), 64, 60_000);
    const held = claim.events.find((e) => e.conversion_type === "Signup" && e.snapshot.conversionId === conversion.id);
    expect(held).toBeDefined();
    const outcome = await deliver(t.ctx.db, held as NonNullable<typeof held>, claim.token, settings(), () =>
      t.clock.now(),
    );
    expect(outcome).toBe("delivered");
    expect(await eventOf(t, who, conversion.id)).toMatchObject({ status: "Delivered", attempts: 1 });
  });
});

describe("attempt log", () => {
  it("logs the template (never the resolved URL), the request, the response and the duration", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const p = path("log-get");
    rx.on(p, {
      status: 201,
      body: '{"accepted":true}',
      headers: { "x-receiver": "r1", "content-type": "application/json" },
    });
    const template = `${rx.base}${p}?key=receiver-secret&click=\${clickId}&c=\${conversionId}`;
    await createHook(t, who, { url: template });
    const clickId = await click(cat);
    const conversion = await recordConversion(t, who, { type: "Signup", clickId });
    const at = t.clock.now().toISOString();
    await tick();

    const resolved = `${rx.base}${rx.at(p)[0]?.url}`;
    expect(resolved).toContain(clickId);
    const event = await eventOf(t, who, conversion.id);
    const attempts = await attemptsOf(t, who, event.id);
    expect(attempts).toHaveLength(1);
    const [attempt] = attempts;
    expect(attempt).toEqual({
      id: expect.any(String),
      attempt: 1,
      at,
      urlTemplate: template,
      method: "GET",
      request: { headers: {}, body: null },
      response: {
        status: 201,
        headers: expect.objectContaining({ "x-receiver": "r1", "content-type": "application/json" }),
        body: '{"accepted":true}',
      },
      durationMs: expect.any(Number),
      errorType: null,
      error: null,
    });
    expect(Number.isInteger(attempt?.durationMs)).toBe(true);
    expect(attempt?.durationMs).toBeGreaterThanOrEqual(0);
    expect(JSON.stringify(attempts)).not.toContain(resolved);
    const [stored] = await t.ctx.db.query<Record<string, unknown>>(
      "select * from webhook_attempts where event_id = $1",
      [event.id],
    );
    expect(JSON.stringify(stored)).not.toContain(clickId);
  });

  it("logs a POST's headers and body as sent, and truncates a big response body to 4 KB", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("log-post");
    const big = "abcdefghij".repeat(1000);
    rx.on(p, { status: 200, body: big });
    await createHook(t, who, { url: `${rx.base}${p}`, method: "POST" });
    const conversion = await recordConversion(t, who, { type: "Deposit", value: 3, currency: "USD" });
    await tick();
    const event = await eventOf(t, who, conversion.id);
    const [attempt] = await attemptsOf(t, who, event.id);
    expect(attempt?.method).toBe("POST");
    expect(attempt?.request).toEqual({ headers: { "content-type": "application/json" }, body: rx.at(p)[0]?.body });
    expect(JSON.parse(attempt?.request.body ?? "null")).toMatchObject({ conversionId: conversion.id, eventValue: 3 });
    expect(attempt?.response?.status).toBe(200);
    expect(attempt?.response?.body).toBe(big.slice(0, 4096));
  });

  it("logs a failed attempt's error type and message with no response", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const port = await closedPort();
    const template = `http://127.0.0.1:${port}/gone?c=\${conversionId}`;
    await createHook(t, who, { url: template });
    const conversion = await recordConversion(t, who, { type: "Signup" });
    await tick();
    const event = await eventOf(t, who, conversion.id);
    expect(await attemptsOf(t, who, event.id)).toEqual([
      {
        id: expect.any(String),
        attempt: 1,
        at: expect.any(String),
        urlTemplate: template,
        method: "GET",
        request: { headers: {}, body: null },
        response: null,
        durationMs: expect.any(Number),
        errorType: "connection_refused",
        error: expect.stringMatching(/\S/),
      },
    ]);
  });
});

describe("events API", () => {
  let who: Tenancy;
  let other: Tenancy;
  let hookA: string;
  let hookB: string;
  let clickOld: string;
  let convOld: Conversion;
  let convNew: Conversion;
  let dayOld: string;
  let dayNew: string;
  let dayBetween: string;
  let oldAt: string;
  let newAt: string;

  beforeAll(async () => {
    const fixture = await seedTenantWithCatalog(t);
    who = fixture.who;
    keepPending.add(who.tenantId);
    other = await seedTenancy(t);
    const [pA, pB] = [path("api-a"), path("api-b")];
    rx.on(pB, { status: 500 });
    hookA = (await createHook(t, who, { url: withId(rx, pA) })).id;
    hookB = (await createHook(t, who, { url: withId(rx, pB) })).id;
    // Noon of the next UTC day, then two days later: the keys (valid one year) still work.
    const noon = new Date(t.clock.now().getTime() + DAY_MS);
    noon.setUTCHours(12, 0, 0, 0);
    oldAt = noon.toISOString();
    newAt = new Date(noon.getTime() + 2 * DAY_MS).toISOString();
    dayOld = oldAt.slice(0, 10);
    dayBetween = new Date(noon.getTime() + DAY_MS).toISOString().slice(0, 10);
    dayNew = newAt.slice(0, 10);
    t.clock.set(oldAt);
    clickOld = await click(fixture.cat);
    convOld = await recordConversion(t, who, { type: "Signup", clickId: clickOld });
    t.clock.set(newAt);
    convNew = await recordConversion(t, who, {
      type: "Deposit",
      clickId: await click(fixture.cat),
      value: 1,
      currency: "EUR",
    });
    await tick();
  });
  afterAll(() => {
    keepPending.delete(who.tenantId);
  });

  const get = (url: string, authorization?: string) =>
    t.call({ method: "GET", url, headers: authorization === undefined ? {} : { authorization } });

  it("lists the tenant's events newest first, each with the documented fields", async () => {
    const res = await get(`${WEBHOOKS_API}/events`, who.apiKey);
    expect(res.statusCode).toBe(200);
    const body = res.json();
    expect(body.pagination).toMatchObject({ offset: 0, total: 4 });
    const events: Event[] = body.data;
    for (const event of events) expect(Object.keys(event).sort()).toEqual(EVENT_KEYS);
    expect(events.map((e) => e.conversionId)).toEqual([convNew.id, convNew.id, convOld.id, convOld.id]);
    const old = events.find((e) => e.conversionId === convOld.id && e.webhookId === hookA);
    expect(old).toEqual({
      id: expect.any(String),
      webhookId: hookA,
      conversionId: convOld.id,
      clickId: clickOld,
      conversionType: "Signup",
      status: "Delivered",
      attempts: 1,
      lastAttemptAt: newAt,
      nextAttemptAt: null,
      createdAt: oldAt,
      simulated: false,
    });
    const page = await get(`${WEBHOOKS_API}/events?offset=1&limit=2`, who.apiKey);
    expect(page.json().data.map((e: Event) => e.id)).toEqual(events.slice(1, 3).map((e) => e.id));
  });

  it("filters by webhookId, clickId, conversionId, status and date", async () => {
    const ids = async (query: string) =>
      (await listEvents(t, who, query)).map((e) => `${e.webhookId === hookA ? "A" : "B"}:${e.conversionId}`).sort();
    expect(await ids(`?webhookId=${hookA}`)).toEqual([`A:${convNew.id}`, `A:${convOld.id}`].sort());
    expect(await ids(`?clickId=${clickOld}`)).toEqual([`A:${convOld.id}`, `B:${convOld.id}`].sort());
    expect(await ids(`?conversionId=${convNew.id}`)).toEqual([`A:${convNew.id}`, `B:${convNew.id}`].sort());
    expect(await ids("?status=Retrying")).toEqual([`B:${convNew.id}`, `B:${convOld.id}`].sort());
    expect(await ids("?status=Delivered")).toEqual([`A:${convNew.id}`, `A:${convOld.id}`].sort());
    expect(await ids("?status=Failed")).toEqual([]);
    expect(await ids(`?dateFrom=${dayNew}`)).toEqual([`A:${convNew.id}`, `B:${convNew.id}`].sort());
    expect(await ids(`?dateTo=${dayOld}`)).toEqual([`A:${convOld.id}`, `B:${convOld.id}`].sort());
    expect(await ids(`?dateFrom=${dayBetween}&dateTo=${dayBetween}`)).toEqual([]);
    expect(await ids(`?dateFrom=${oldAt}&dateTo=${oldAt}`)).toHaveLength(2);
    expect(await ids(`?webhookId=${hookB}&conversionId=${convOld.id}&status=Retrying`)).toEqual([`B:${convOld.id}`]);
    const bad = await get(`${WEBHOOKS_API}/events?status=Lost`, who.apiKey);
    expect(bad.statusCode).toBe(400);
  });

  it("answers one event and its attempts", async () => {
    const [retrying] = await listEvents(t, who, `?webhookId=${hookB}&conversionId=${convOld.id}`);
    expect(retrying).toBeDefined();
    const one = await getEvent(t, who, retrying?.id ?? "");
    expect(one).toEqual(retrying);
    expect(one.status).toBe("Retrying");
    const next = Date.parse(one.nextAttemptAt ?? "");
    expect(next).toBeGreaterThan(Date.parse(newAt));
    const attempts = await attemptsOf(t, who, one.id);
    expect(attempts).toHaveLength(1);
    expect(attempts[0]).toMatchObject({ attempt: 1, errorType: "http_status", response: { status: 500 } });
  });

  it("answers 404 for another tenant's event and lists none of them", async () => {
    const [event] = await listEvents(t, who);
    const id = event?.id ?? "";
    expect((await get(`${WEBHOOKS_API}/events/${id}`, other.apiKey)).statusCode).toBe(404);
    expect((await get(`${WEBHOOKS_API}/events/${id}/attempts`, other.apiKey)).statusCode).toBe(404);
    expect(await listEvents(t, other)).toEqual([]);
    expect(await listEvents(t, other, `?conversionId=${convOld.id}`)).toEqual([]);
    expect((await get(`${WEBHOOKS_API}/events/evt_does_not_exist`, who.apiKey)).statusCode).toBe(404);
  });

  it("answers 401 without a credential and 403 to a person without account.admin", async () => {
    const [event] = await listEvents(t, who);
    const id = event?.id ?? "";
    const urls = [`${WEBHOOKS_API}/events`, `${WEBHOOKS_API}/events/${id}`, `${WEBHOOKS_API}/events/${id}/attempts`];
    for (const url of urls) expect((await get(url)).statusCode, url).toBe(401);
    const reader = await seedTenancy(t, { permissions: ["reports.read", "conversions.read", "webhooks.read"] });
    for (const url of urls) expect((await get(url, reader.bearer)).statusCode, url).toBe(403);
    const admin = await seedTenancy(t, { permissions: ["account.admin"] });
    expect((await get(`${WEBHOOKS_API}/events`, admin.bearer)).statusCode).toBe(200);
  });
});

describe("the worker loop", () => {
  it("delivers a new conversion's event at once, woken by NOTIFY rather than its idle poll", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const p = path("loop");
    await createHook(t, who, { url: withId(rx, p) });
    await t.ctx.delivery.start();
    try {
      // Let the first (empty) round finish, so the loop is asleep until its next poll (1 s).
      await new Promise((resolve) => setTimeout(resolve, 100));
      const started = Date.now();
      const conversion = await recordConversion(t, who, { type: "Signup" });
      const got = await rx.waitFor(p, 1000);
      expect(got.query.get("c")).toBe(conversion.id);
      // Well before the idle poll could have picked it up.
      expect(Date.now() - started).toBeLessThan(700);
      await expect.poll(async () => (await eventOf(t, who, conversion.id)).status, { timeout: 2000 }).toBe("Delivered");
    } finally {
      await t.ctx.delivery.stop();
    }
    // Stopped: a new conversion stays queued.
    const later = await recordConversion(t, who, { type: "Signup" });
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect((await eventOf(t, who, later.id)).status).toBe("Queued");
  });

  it("shares a burst between two worker nodes, each event sent and delivered once", async (ctx) => {
    if (t.testDb.kind !== "postgres") return ctx.skip();
    const { who } = await seedTenantWithCatalog(t);
    const p = path("two-workers");
    await createHook(t, who, { url: withId(rx, p) });
    const conversions = await Promise.all(
      Array.from({ length: 4 }, (_, batch) =>
        t.call({
          method: "POST",
          url: "/api/v1/conversions",
          headers: { authorization: who.apiKey },
          payload: {
            items: Array.from({ length: 100 }, (_, i) => ({ type: "Signup", externalId: `two-${batch}-${i}` })),
          },
        }),
      ),
    );
    for (const res of conversions) expect(res.statusCode, res.body).toBe(201);
    const other = new DeliveryWorker({
      db: t.testDb.openAnother(),
      clock: t.clock,
      log: t.app.log,
      settings: { timeoutMs: 500, retryIntervalMs: HOUR_MS, policy: new AddressPolicy(["127.0.0.1"]) },
    });
    const counts: [number, number] = [0, 0];
    const drain = async (worker: { tick(): Promise<number> }, index: 0 | 1) => {
      for (let claimed = await worker.tick(); claimed > 0; claimed = await worker.tick()) counts[index] += claimed;
    };
    await Promise.all([drain(t.ctx.delivery, 0), drain(other, 1)]);
    expect(counts[0] + counts[1]).toBe(400);
    expect(counts[0]).toBeGreaterThan(0);
    expect(counts[1]).toBeGreaterThan(0);
    // Each conversion reached the receiver exactly once and its event is Delivered after one attempt.
    const sent = conversionsAt(rx, p);
    expect(sent).toHaveLength(400);
    expect(new Set(sent).size).toBe(400);
    const events = await listEvents(t, who, "?limit=500");
    expect(events.filter((e) => e.status === "Delivered" && e.attempts === 1)).toHaveLength(400);
  });
});
