import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";
import { createHook, startWebhookTestApp } from "./helpers/webhooks.js";

// A batch is recorded set-based (one statement per step for the whole batch: conversion-service.ts,
// outgoing-webhooks/fan-out.ts). Each item must still be answered, attributed, deduplicated and
// fanned out exactly as if it had come alone: mixed types, attributed and not, duplicates of an
// earlier conversion and of an item of the same batch, items without externalId, and two webhooks
// that match different items.

const TYPES = ["Deposit", "Signup", "CpaCommission", "FirstTimeDeposit"] as const;

describe("a mixed batch, set-based", { timeout: 180_000 }, () => {
  let t: TestApp;
  let who: Tenancy;
  let cat: CatalogFixture;
  const hooks: { affiliate: string; depositsOfSource: string } = { affiliate: "", depositsOfSource: "" };

  beforeAll(async () => {
    t = await startWebhookTestApp({ app: { clicks: { intervalMs: 3_600_000 } } });
    who = await seedTenancy(t);
    cat = await seedCatalog(t, who);
    hooks.affiliate = (await createHook(t, who, { url: `http://127.0.0.1:9/a?c=\${conversionId}` })).id;
    hooks.depositsOfSource = (
      await createHook(t, who, {
        url: `http://127.0.0.1:9/s?c=\${conversionId}`,
        trafficSourceId: cat.trafficSourceId,
        conversionTypes: ["Deposit"],
      })
    ).id;
  }, 180_000);
  afterAll(async () => t?.close());

  const post = (payload: Record<string, unknown>) =>
    t.call({ method: "POST", url: "/api/v1/conversions", headers: { authorization: who.apiKey }, payload });

  it("answers, stores and fans out every item as if it came alone", async () => {
    const clicks = [
      await clickThrough(t, cat, "?gclid=G-batch"),
      await clickThrough(t, cat, "?fbclid=F-batch"),
      await clickThrough(t, cat),
    ];
    const earlier = await post({ type: "Signup", externalId: "batch-earlier" });
    expect(earlier.statusCode, earlier.body).toBe(201);

    const items: Record<string, unknown>[] = Array.from({ length: 40 }, (_, i) => ({
      type: TYPES[i % TYPES.length],
      ...(i % 2 === 0 ? { clickId: clicks[i % clicks.length] } : {}),
      value: (i % TYPES.length) % 2 === 0 ? 10 + i : undefined,
      currency: "EUR",
      externalId: `batch-${i}`,
    }));
    items[10] = { type: "Deposit", value: 5, currency: "EUR", externalId: "batch-earlier" };
    items[11] = { ...items[2] };
    items[13] = { type: "Signup", currency: "EUR" };
    items[14] = { type: "Deposit", value: 1, currency: "EUR" };

    const res = await post({ items });
    expect(res.statusCode, res.body).toBe(201);
    const data = res.json().data;
    expect(data).toMatchObject({ created: 38, duplicates: 2 });
    expect(data.items).toHaveLength(40);
    expect(data.items[10]).toMatchObject({ id: earlier.json().data.id, type: "Signup", duplicate: true });
    expect(data.items[11]).toMatchObject({ id: data.items[2].id, duplicate: true });
    for (const [i, answer] of data.items.entries()) {
      if (i === 10 || i === 11) continue;
      const item = items[i] ?? {};
      expect(answer, `item ${i}`).toMatchObject({
        duplicate: false,
        type: item.type,
        externalId: item.externalId ?? null,
        clickId: item.clickId ?? null,
        attributed: item.clickId !== undefined,
        trafficSourceId: item.clickId === undefined ? null : cat.trafficSourceId,
        value: item.value ?? null,
      });
    }
    expect(data.items[0].attributionSource).toBe("google");
    expect(data.items[4].attributionSource).toBe("meta");
    expect(data.items[8].attributionSource).toBe("direct");

    const stored = await t.ctx.db.query<{ n: number }>(
      "select count(*)::int as n from conversions where tenant_id = $1",
      [who.tenantId],
    );
    expect(stored[0]?.n).toBe(1 + 38);

    const events = await t.ctx.db.query<{ conversion_id: string; webhook_id: string; snapshot: unknown }>(
      "select conversion_id, webhook_id, snapshot from webhook_events where tenant_id = $1",
      [who.tenantId],
    );
    const eventsOf = (conversionId: string) => events.filter((e) => e.conversion_id === conversionId);
    // The earlier Signup fired the affiliate-level webhook once; repeating it fired nothing.
    expect(eventsOf(earlier.json().data.id).map((e) => e.webhook_id)).toEqual([hooks.affiliate]);
    let expected = 1;
    for (const [i, answer] of data.items.entries()) {
      if (answer.duplicate) continue;
      const wanted = [
        ...(answer.type === "CpaCommission" ? [] : [hooks.affiliate]),
        ...(answer.type === "Deposit" && answer.attributed ? [hooks.depositsOfSource] : []),
      ];
      expected += wanted.length;
      expect(
        eventsOf(answer.id)
          .map((e) => e.webhook_id)
          .sort(),
        `item ${i}`,
      ).toEqual(wanted.sort());
    }
    expect(events).toHaveLength(expected);

    const [snapshot] = eventsOf(data.items[0].id).map((e) => e.snapshot);
    expect(snapshot).toMatchObject({
      conversionId: data.items[0].id,
      conversionType: "Deposit",
      clickId: clicks[0],
      attributionSource: "google",
      account: { id: cat.accountId, name: "Account" },
      trafficSource: { id: cat.trafficSourceId, name: "Source" },
      attribution: { gclid: "G-batch" },
      pageViews: [],
    });
    const [unattributed] = eventsOf(data.items[1].id).map((e) => e.snapshot);
    expect(unattributed).toMatchObject({ clickId: null, account: null, clickDate: null, attributionSource: "direct" });
  });
});
