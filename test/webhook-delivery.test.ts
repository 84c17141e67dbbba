/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { describe, expect, it } from "vitest";
import { HOUR_MS } from "../src/platform/durations.js";
import { createVia } from "./helpers/catalog.js";
import { BROWSER, click, deliveryFixture, path, rx, t, tick } from "./helpers/webhook-delivery.js";
import {
  attemptsOf,
  conversionsAt,
  createHook,
  eventOf,
  eventsOf,
  getEvent,
  listEvents,
  PAYLOAD_KEYS,
  patchHook,
  recordConversion,
  seedTenantWithCatalog,
  setClickWebhooks,
  suspendHook,
  withId,
} from "./helpers/webhooks.js";

// Outgoing conversion webhooks, from the conversion to what a real loopback receiver gets
// (docs/outgoing-webhooks.md): which conversions fan out, and the request the receiver gets.
// Failures, retries and leases: webhook-delivery-failures.test.ts; the attempt log, the events
// API and the worker loop: webhook-delivery-log.test.ts.

deliveryFixture();

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

  // Click webhooks come from clicks through /go (test/webhook-click-deliveries.test.ts, the
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
      status: "approved",
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
      status: "approved",
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
