/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DeliveryEvent as Event } from "../src/features/outgoing-webhooks/event-service.js";
import { DeliveryWorker } from "../src/features/outgoing-webhooks/worker.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import { AddressPolicy } from "../src/platform/webhook-sender.js";
import { seedTenancy, type Tenancy } from "./helpers/app.js";
import { closedPort } from "./helpers/receiver.js";
import { click, deliveryFixture, EVENT_KEYS, keepPending, path, rx, t, tick } from "./helpers/webhook-delivery.js";
import {
  attemptsOf,
  type Conversion,
  conversionsAt,
  createHook,
  eventOf,
  getEvent,
  listEvents,
  recordConversion,
  seedTenantWithCatalog,
  WEBHOOKS_API,
  withId,
} from "./helpers/webhooks.js";

// What outgoing conversion webhook deliveries leave behind (docs/outgoing-webhooks.md): the
// attempt log, the events API, and the worker loop that sends them.

deliveryFixture();

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
      conversionStatus: "approved",
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
