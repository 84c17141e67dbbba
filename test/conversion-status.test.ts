/* biome-ignore-all lint/suspicious/noTemplateCurlyInString: webhook URL templates use the ${name} placeholder syntax */
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import type { SourcePostbackWorker } from "../src/features/source-postbacks/index.js";
import { seedTenancy, type TestApp } from "./helpers/app.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { cancelWaitingPostbacks, clickOn, setPostback, startPostbackApp } from "./helpers/source-postbacks.js";
import {
  cancelWaitingEvents,
  createHook,
  receiverPaths,
  recordConversion,
  seedTenantWithCatalog,
  signInPerson,
} from "./helpers/webhooks.js";

// The conversion lifecycle (docs/conversions.md "Statuses"): a status on the postback and the
// API, a repeat with another status changing it, PATCH with its history, the list's filter, and
// who is told of a change: webhooks and traffic-source postbacks that ask, the operational
// webhooks. Real HTTP, real loopback receivers, on PGlite and PostgreSQL.

let t: TestApp;
let postbacks: SourcePostbackWorker;
let rx: Receiver;

beforeAll(async () => {
  ({ t, worker: postbacks } = await startPostbackApp());
  rx = await startReceiver();
});
afterAll(async () => {
  await t.close();
  await rx.close();
});
afterEach(async () => {
  await cancelWaitingEvents(t);
  await cancelWaitingPostbacks(t);
});

const path = receiverPaths("/status");
const auth = (who: { apiKey: string }) => ({ authorization: who.apiKey });

function postback(key: string, query: Record<string, string>) {
  return t.call({ method: "GET", url: `/postback/${key}?${new URLSearchParams(query)}` });
}

function patch(who: { apiKey: string } | string, id: string, payload: Record<string, unknown>) {
  const authorization = typeof who === "string" ? who : who.apiKey;
  return t.call({ method: "PATCH", url: `/api/v1/conversions/${id}`, headers: { authorization }, payload });
}

async function history(who: { apiKey: string }, id: string) {
  const res = await t.call({ method: "GET", url: `/api/v1/conversions/${id}/history`, headers: auth(who) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data as { at: string; status: string; reason: string | null; source: string; by: unknown }[];
}

describe("recording a status", () => {
  it("takes status in any case on the postback and the API, approved when none is given", async () => {
    const who = await seedTenancy(t);
    const plain = await postback(who.postbackKey, { type: "Signup", externalId: "s-1" });
    expect(plain.statusCode, plain.body).toBe(201);
    expect(plain.json()).toMatchObject({ status: "ok", conversionStatus: "approved", statusChanged: false });

    const pending = await postback(who.postbackKey, { type: "Deposit", externalId: "s-2", status: "PENDING" });
    expect(pending.json()).toMatchObject({ conversionStatus: "pending" });

    const viaApi = await recordConversion(t, who, { type: "Deposit", externalId: "s-3", status: "Rejected" });
    expect(viaApi).toMatchObject({ status: "rejected", duplicate: false, statusChanged: false });
  });

  it("refuses a status it does not know, naming the field", async () => {
    const who = await seedTenancy(t);
    const api = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: auth(who),
      payload: { items: [{ type: "Signup" }, { type: "Signup", status: "paid" }] },
    });
    expect(api.statusCode).toBe(400);
    expect(api.json().data.errors[0].path).toBe("items[1].status");
    const pb = await postback(who.postbackKey, { type: "Signup", status: "chargeback" });
    expect(pb.statusCode).toBe(400);
    expect(pb.json().message).toContain("status");
    const none = await t.call({ method: "GET", url: "/api/v1/conversions?limit=5", headers: auth(who) });
    expect(none.json().data).toEqual([]);
  });
});

describe("changing a status", () => {
  it("changes it when a postback repeats the externalId with another status, and only then", async () => {
    const who = await seedTenancy(t);
    const first = await postback(who.postbackKey, { type: "FirstTimeDeposit", externalId: "d-1", status: "pending" });
    const id = first.json().id as string;

    const same = await postback(who.postbackKey, { type: "FirstTimeDeposit", externalId: "d-1", status: "pending" });
    expect(same.statusCode).toBe(200);
    expect(same.json()).toMatchObject({ status: "duplicate", id, conversionStatus: "pending", statusChanged: false });
    const silent = await postback(who.postbackKey, { type: "FirstTimeDeposit", externalId: "d-1" });
    expect(silent.json()).toMatchObject({ conversionStatus: "pending", statusChanged: false });

    const approved = await postback(who.postbackKey, {
      type: "FirstTimeDeposit",
      externalId: "d-1",
      status: "Approved",
    });
    expect(approved.statusCode).toBe(200);
    expect(approved.json()).toMatchObject({
      status: "duplicate",
      id,
      duplicate: true,
      conversionStatus: "approved",
      statusChanged: true,
    });

    const viaApi = await t.call({
      method: "POST",
      url: "/api/v1/conversions",
      headers: auth(who),
      payload: { type: "FirstTimeDeposit", externalId: "d-1", status: "reversed" },
    });
    expect(viaApi.statusCode).toBe(200);
    expect(viaApi.json().data).toMatchObject({ id, status: "reversed", duplicate: true, statusChanged: true });

    const entries = await history(who, id);
    expect(entries.map((e) => [e.status, e.source])).toEqual([
      ["pending", "postback"],
      ["approved", "postback"],
      ["reversed", "api"],
    ]);
    expect(entries[2]?.by).toMatchObject({ type: "apiKey", id: who.apiKeyId });
  });

  it("PATCH sets the status with a reason, kept in the history with who did it", async () => {
    const who = await seedTenancy(t);
    const conversion = await recordConversion(t, who, { type: "Deposit", value: 40, currency: "EUR" });
    const res = await patch(who, conversion.id, { status: "REJECTED", reason: "fraud check failed" });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toMatchObject({ id: conversion.id, status: "rejected" });
    const again = await patch(who, conversion.id, { status: "rejected" });
    expect(again.statusCode).toBe(200);
    expect(again.json().message).toContain("already");

    const person = await signInPerson(t, who.tenantId, {
      name: "Pat Manager",
      permissions: ["conversions.read", "conversions.update"],
    });
    expect((await patch(person.bearer, conversion.id, { status: "approved" })).statusCode).toBe(200);

    const entries = await history(who, conversion.id);
    expect(entries).toHaveLength(3);
    expect(entries[0]).toMatchObject({ status: "approved", reason: null, source: "api" });
    expect(entries[1]).toMatchObject({
      status: "rejected",
      reason: "fraud check failed",
      source: "api",
      by: { type: "apiKey", id: who.apiKeyId },
    });
    expect(entries[2]).toMatchObject({
      status: "approved",
      source: "dashboard",
      by: { type: "user", name: "Pat Manager" },
    });
    const times = entries.map((e) => Date.parse(e.at));
    expect([...times].sort((a, b) => a - b)).toEqual(times);
  });

  it("refuses a bad status, an unknown conversion, another tenant's, and a caller without conversions.update", async () => {
    const who = await seedTenancy(t);
    const other = await seedTenancy(t);
    const conversion = await recordConversion(t, who, { type: "Signup" });
    const bad = await patch(who, conversion.id, { status: "refunded" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().data.errors[0].path).toBe("status");
    expect((await patch(who, "cnv_nothing", { status: "approved" })).statusCode).toBe(404);
    expect((await patch(other, conversion.id, { status: "reversed" })).statusCode).toBe(404);
    const historyOfOther = await t.call({
      method: "GET",
      url: `/api/v1/conversions/${conversion.id}/history`,
      headers: auth(other),
    });
    expect(historyOfOther.statusCode).toBe(404);
    const reader = await signInPerson(t, who.tenantId, { name: "Reader", permissions: ["conversions.read"] });
    expect((await patch(reader.bearer, conversion.id, { status: "reversed" })).statusCode).toBe(403);
    expect((await history(who, conversion.id)).map((e) => e.status)).toEqual(["approved"]);
  });

  it("filters the conversions list by status (comma list, any case)", async () => {
    const who = await seedTenancy(t);
    await recordConversion(t, who, { type: "Signup", status: "pending" });
    await recordConversion(t, who, { type: "Signup", status: "rejected" });
    await recordConversion(t, who, { type: "Signup" });
    const list = async (query: string) => {
      const res = await t.call({ method: "GET", url: `/api/v1/conversions?${query}`, headers: auth(who) });
      expect(res.statusCode, res.body).toBe(200);
      return (res.json().data as { status: string }[]).map((c) => c.status).sort();
    };
    expect(await list("status=pending,APPROVED")).toEqual(["approved", "pending"]);
    expect(await list("status=rejected")).toEqual(["rejected"]);
    expect(await list("limit=10")).toEqual(["approved", "pending", "rejected"]);
    const bad = await t.call({ method: "GET", url: "/api/v1/conversions?status=paid", headers: auth(who) });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().data.errors[0].path).toBe("status");
  });
});

describe("who is told of a change", () => {
  it("sends the change to a webhook with statusChanges, and nothing to one without", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const told = path("told");
    const unaware = path("unaware");
    await createHook(t, who, {
      name: "Knows statuses",
      url: `${rx.base}${told}?c=\${conversionId}&s=\${conversionStatus}`,
      method: "GET",
      statusChanges: true,
    });
    await createHook(t, who, {
      name: "Counts deposits",
      url: `${rx.base}${unaware}`,
      method: "POST",
    });
    const clickId = await clickOn(t, cat, cat.trafficSourceId);
    const conversion = await recordConversion(t, who, {
      type: "FirstTimeDeposit",
      clickId,
      value: 100,
      currency: "EUR",
      externalId: "ftd-77",
    });
    await t.ctx.delivery.tick();
    expect(rx.at(told).map((r) => r.query.get("s"))).toEqual(["approved"]);
    expect(rx.at(unaware).map((r) => JSON.parse(r.body).status)).toEqual(["approved"]);

    const reversed = await patch(who, conversion.id, { status: "reversed", reason: "chargeback" });
    expect(reversed.statusCode, reversed.body).toBe(200);
    await t.ctx.delivery.tick();
    expect(rx.at(told).map((r) => [r.query.get("c"), r.query.get("s")])).toEqual([
      [conversion.id, "approved"],
      [conversion.id, "reversed"],
    ]);
    expect(rx.at(unaware)).toHaveLength(1);
  });

  it("sends a conversion recorded as rejected only to webhooks that take statuses", async () => {
    const { who } = await seedTenantWithCatalog(t);
    const told = path("told-rejected");
    const unaware = path("unaware-rejected");
    await createHook(t, who, { name: "Knows", url: `${rx.base}${told}`, method: "POST", statusChanges: true });
    await createHook(t, who, { name: "Does not", url: `${rx.base}${unaware}`, method: "POST" });
    await recordConversion(t, who, { type: "Deposit", value: 10, currency: "EUR", status: "rejected" });
    await t.ctx.delivery.tick();
    expect(rx.at(told).map((r) => JSON.parse(r.body).status)).toEqual(["rejected"]);
    expect(rx.at(unaware)).toEqual([]);
  });

  it("re-fires a traffic-source postback that takes status changes, and not one that does not", async () => {
    const refired = await seedTenantWithCatalog(t);
    const once = await seedTenantWithCatalog(t);
    const p1 = path("tsp-refired");
    const p2 = path("tsp-once");
    await setPostback(t, refired.who, refired.cat.trafficSourceId, "zid", {
      url: `${rx.base}${p1}?sub=\${externalId}&s=\${conversionStatus}`,
      statusChanges: true,
    });
    await setPostback(t, once.who, once.cat.trafficSourceId, "zid", {
      url: `${rx.base}${p2}?sub=\${externalId}&s=\${conversionStatus}`,
    });
    for (const [tenant, zone] of [
      [refired, "z-1"],
      [once, "z-2"],
    ] as const) {
      const clickId = await clickOn(t, tenant.cat, tenant.cat.trafficSourceId, `?zid=${zone}`);
      const conversion = await recordConversion(t, tenant.who, {
        type: "Deposit",
        clickId,
        value: 20,
        currency: "EUR",
      });
      await postbacks.tick();
      expect((await patch(tenant.who, conversion.id, { status: "reversed" })).statusCode).toBe(200);
      await postbacks.tick();
    }
    expect(rx.at(p1).map((r) => [r.query.get("sub"), r.query.get("s")])).toEqual([
      ["z-1", "approved"],
      ["z-1", "reversed"],
    ]);
    expect(rx.at(p2).map((r) => r.query.get("s"))).toEqual(["approved"]);
  });

  it("lists every place a conversion went, with the status each delivery carried, from one call", async () => {
    const { who, cat } = await seedTenantWithCatalog(t);
    const hook = await createHook(t, who, {
      name: "Status receiver",
      url: `${rx.base}${path("deliveries")}`,
      method: "POST",
      statusChanges: true,
    });
    await setPostback(t, who, cat.trafficSourceId, "zid", { url: `${rx.base}${path("deliveries-tsp")}` });
    const clickId = await clickOn(t, cat, cat.trafficSourceId, "?zid=z-9");
    const conversion = await recordConversion(t, who, { type: "Deposit", clickId, value: 5, currency: "EUR" });
    await t.ctx.delivery.tick();
    await postbacks.tick();
    expect((await patch(who, conversion.id, { status: "rejected" })).statusCode).toBe(200);

    const res = await t.call({
      method: "GET",
      url: `/api/v1/conversions/${conversion.id}/deliveries`,
      headers: auth(who),
    });
    expect(res.statusCode, res.body).toBe(200);
    const deliveries = res.json().data as Record<string, unknown>[];
    // Oldest first; the test clock stands still, so these three share one time: compared as a set.
    expect(
      deliveries
        .map((d) => [d.destination, (d.target as { id: string }).id, d.status, d.conversionStatus, d.attempts])
        .sort(),
    ).toEqual(
      [
        ["webhook", hook.id, "Delivered", "approved", 1],
        ["trafficSourcePostback", String(cat.trafficSourceId), "Delivered", "approved", 1],
        ["webhook", hook.id, "Queued", "rejected", 0],
      ].sort(),
    );
    expect(deliveries[0]).toMatchObject({ target: { name: "Status receiver" }, lastAttemptAt: expect.any(String) });

    const other = await seedTenancy(t);
    const hidden = await t.call({
      method: "GET",
      url: `/api/v1/conversions/${conversion.id}/deliveries`,
      headers: auth(other),
    });
    expect(hidden.statusCode).toBe(404);
  });

  it("announces conversion.status_changed to the operational webhooks", async () => {
    const who = await seedTenancy(t);
    const res = await t.call({
      method: "POST",
      url: "/api/v1/notifications/webhooks",
      headers: auth(who),
      payload: { url: `${rx.base}${path("ops")}`, events: ["conversion.status_changed"] },
    });
    expect(res.statusCode, res.body).toBe(201);
    const conversion = await recordConversion(t, who, { type: "Signup", status: "pending" });
    expect((await patch(who, conversion.id, { status: "approved", reason: "checked" })).statusCode).toBe(200);
    const messages = await t.ctx.db.query<{ type: string; body: string }>(
      "select type, body from notification_messages where tenant_id = $1",
      [who.tenantId],
    );
    expect(messages.map((m) => m.type)).toEqual(["conversion.status_changed"]);
    expect(JSON.parse(messages[0]?.body ?? "{}").data).toEqual({
      conversionId: conversion.id,
      status: "approved",
      previousStatus: "pending",
      reason: "checked",
    });
  });
});
