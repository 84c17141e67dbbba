import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createTenant } from "../src/features/tenants/index.js";
import type { ValidConversion } from "../src/features/tracking/conversion-input.js";
import { type ConversionHook, NO_HOOKS } from "../src/features/tracking/conversion-service.js";
import { ConversionWriter } from "../src/features/tracking/conversion-writer.js";
import { openTestDb, type TestDb } from "./helpers/db.js";

// Concurrent requests of one tenant share a transaction (a group commit), so a busy link's rollup
// row is locked once per group rather than once per request (conversion-writer.ts). Each
// transaction takes one time from the writer's clock, which here counts: the distinct recordedAt
// of the conversions are the transactions that wrote them.

const SYSTEM = { type: "system", name: "test" } as const;

function item(externalId: string): ValidConversion {
  return {
    type: "Deposit",
    eventName: "Deposit",
    clickId: null,
    value: "10.00",
    currency: "EUR",
    externalId,
    occurredAt: new Date(),
    status: null,
  };
}

describe("conversion writer", () => {
  let testDb: TestDb;
  let tenantId: string;
  let tick = Date.parse("2026-11-01T00:00:00Z");
  const clock = () => {
    tick += 1000;
    return new Date(tick);
  };
  // A hook that fails its transaction when it meets the externalId "boom", as a failing statement would.
  const failOnBoom: ConversionHook = async (_tx, _tenant, conversions) => {
    if (conversions.some((c) => c.externalId === "boom")) throw new Error("boom");
  };

  beforeAll(async () => {
    testDb = await openTestDb();
    tenantId = (await createTenant(testDb.db, { name: "Writer" }, SYSTEM, new Date())).id;
  });
  afterAll(async () => testDb?.dispose());

  it("writes concurrent requests of a tenant in few transactions, each answered with its own items", async () => {
    const writer = new ConversionWriter(testDb.db, NO_HOOKS, clock);
    const answers = await Promise.all(
      Array.from({ length: 40 }, (_, i) => writer.record(tenantId, [item(`g-${i}`), item(`g-${i}`)])),
    );
    for (const [i, answer] of answers.entries()) {
      expect(answer.map((a) => [a.conversion.externalId, a.duplicate])).toEqual([
        [`g-${i}`, false],
        [`g-${i}`, true],
      ]);
    }
    const rows = await testDb.db.query<{ transactions: number; stored: number }>(
      `select count(distinct recorded_at)::int as transactions, count(*)::int as stored
         from conversions where tenant_id = $1 and external_id like 'g-%'`,
      [tenantId],
    );
    // The first request starts at once and alone; the 39 that came meanwhile share the next.
    expect(rows[0]).toEqual({ transactions: 2, stored: 40 });
  });

  it("answers a repeat of an earlier request's externalId in a shared transaction as its duplicate", async () => {
    const writer = new ConversionWriter(testDb.db, NO_HOOKS, clock);
    const [first, second, third] = await Promise.all([
      writer.record(tenantId, [item("d-0")]),
      writer.record(tenantId, [item("d-1")]),
      writer.record(tenantId, [item("d-1")]),
    ]);
    expect(first?.[0]?.duplicate).toBe(false);
    expect(second?.[0]?.duplicate).toBe(false);
    expect(third?.[0]?.duplicate).toBe(true);
    expect(third?.[0]?.conversion.id).toBe(second?.[0]?.conversion.id);
  });

  it("fails only the request whose transaction fails, not those it shared it with", async () => {
    const writer = new ConversionWriter(testDb.db, { conversions: [failOnBoom], statusChanges: [] }, clock);
    const results = await Promise.allSettled([
      writer.record(tenantId, [item("f-0")]),
      writer.record(tenantId, [item("f-1")]),
      writer.record(tenantId, [item("boom")]),
      writer.record(tenantId, [item("f-2")]),
    ]);
    expect(results.map((r) => r.status)).toEqual(["fulfilled", "fulfilled", "rejected", "fulfilled"]);
    const stored = await testDb.db.query<{ external_id: string }>(
      "select external_id from conversions where tenant_id = $1 and external_id in ('f-0', 'f-1', 'f-2', 'boom') order by 1",
      [tenantId],
    );
    expect(stored.map((r) => r.external_id)).toEqual(["f-0", "f-1", "f-2"]);
  });

  it("writes different tenants side by side, each in its own transactions", async () => {
    const other = (await createTenant(testDb.db, { name: "Writer 2" }, SYSTEM, new Date())).id;
    const writer = new ConversionWriter(testDb.db, NO_HOOKS, clock);
    const [a, b] = await Promise.all([writer.record(tenantId, [item("t-a")]), writer.record(other, [item("t-a")])]);
    expect(a?.[0]?.duplicate).toBe(false);
    expect(b?.[0]?.duplicate).toBe(false);
    expect(a?.[0]?.conversion.id).not.toBe(b?.[0]?.conversion.id);
  });
});
