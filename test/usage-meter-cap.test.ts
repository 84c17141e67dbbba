import { Writable } from "node:stream";
import Fastify, { type FastifyBaseLogger } from "fastify";
import { Registry } from "prom-client";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { UsageMeter } from "../src/features/usage/index.js";
import { openTestDb, type TestDb } from "./helpers/db.js";

// The usage meter's memory is bounded in bytes while the database does not take its writes:
// failed flushes put counters back without growing past the bound, new counters beyond it are
// dropped (counted and logged), and calls to existing counters are still counted.

function recordingLogger(): { log: FastifyBaseLogger; messages: () => string[] } {
  const lines: string[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      lines.push(chunk.toString());
      done();
    },
  });
  return {
    log: Fastify({ logger: { level: "warn", stream } }).log,
    messages: () => lines.map((l) => (JSON.parse(l) as { msg: string }).msg),
  };
}

const CAP = 64 * 1024;
const AT = new Date("2026-03-02T10:00:30Z");

function call(i: number, route = "/api/v1/things") {
  // Distinct client IPs make distinct counters.
  return {
    tenantId: "ten_cap",
    tokenId: "tok_cap",
    method: "GET",
    route,
    status: 200,
    ip: `10.0.${Math.floor(i / 250)}.${i % 250}`,
    at: AT,
  };
}

describe("the usage meter's bound in bytes", () => {
  let testDb: TestDb;

  beforeEach(async () => {
    testDb = await openTestDb();
  });
  afterEach(() => testDb.dispose());

  it("stays within USAGE_BUFFER_MAX_BYTES while the database is away, and writes what it kept once it returns", async () => {
    const { log, messages } = recordingLogger();
    const meter = new UsageMeter(testDb.db, log, CAP);
    const registry = new Registry();
    meter.registerMetrics(registry);
    // The database stops taking usage: every write fails (not a data error).
    await testDb.db.exec("alter table api_usage rename to api_usage_away");

    let recorded = 0;
    let peak = 0;
    for (let round = 0; round < 6; round++) {
      for (let i = 0; i < 400; i++) {
        meter.record(call(round * 400 + i));
        recorded += 1;
        peak = Math.max(peak, meter.bytes);
      }
      // A call to a counter that exists is still counted, whatever the bound.
      meter.record(call(0));
      recorded += 1;
      await meter.flush();
      peak = Math.max(peak, meter.bytes);
    }
    expect(peak).toBeLessThanOrEqual(CAP);
    expect(meter.bytes).toBeGreaterThan(CAP / 2);
    expect(meter.dropped).toBeGreaterThan(0);
    expect(messages()).toContain("usage flush failed; will retry");
    expect(messages().some((m) => m.includes("usage buffer full"))).toBe(true);
    const text = await registry.metrics();
    expect(text).toContain(`usage_calls_dropped_total ${meter.dropped}`);
    expect(text).toMatch(/usage_buffer_bytes \d+/);

    // Back: everything kept is written, once; kept + dropped = every call.
    await testDb.db.exec("alter table api_usage_away rename to api_usage");
    await meter.flush();
    expect(meter.bytes).toBe(0);
    const [row] = await testDb.db.query<{ calls: string; counters: string; first: string }>(
      `select sum(calls) as calls, count(*) as counters,
              sum(calls) filter (where ip = '10.0.0.0') as first
         from api_usage where token_id = 'tok_cap'`,
    );
    expect(Number(row?.calls) + meter.dropped).toBe(recorded);
    expect(Number(row?.first)).toBe(7);
    expect(Number(row?.counters)).toBeLessThan(6 * 400);
    await meter.close();
  });

  it("does not queue a write per call while a write is outstanding", async () => {
    const { log } = recordingLogger();
    const meter = new UsageMeter(testDb.db, log, CAP);
    await testDb.db.exec("alter table api_usage rename to api_usage_away");
    // Past the flush threshold every call would start a write; one queued write is enough.
    const pending = new Set<Promise<void>>();
    for (let i = 0; i < 120; i++) {
      meter.record(call(i));
      pending.add(meter.flush());
    }
    expect(pending.size).toBeLessThanOrEqual(2);
    await Promise.all(pending);
    await testDb.db.exec("alter table api_usage_away rename to api_usage");
    await meter.close();
    const [row] = await testDb.db.query<{ calls: string }>("select sum(calls) as calls from api_usage");
    expect(Number(row?.calls)).toBe(120);
  });
});
