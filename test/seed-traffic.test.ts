import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DEMO_CURRENCIES, generateTraffic } from "../src/features/demo/traffic.js";
import { RAW_EVENT_RETENTION_DAYS } from "../src/features/tracking/retention.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

let t: TestApp;
let who: Tenancy;

beforeAll(async () => {
  t = await startTestApp();
  who = await seedTenancy(t);
});
afterAll(async () => t.close());

async function one<T extends object>(sql: string, params: unknown[]): Promise<T> {
  const [row] = await t.testDb.db.query<T>(sql, params);
  if (!row) throw new Error(`no row from ${sql}`);
  return row;
}

describe("traffic generator (npm run seed)", () => {
  it("creates a catalog once and fills the window with clicks and conversions whose rollups match", async () => {
    const now = new Date("2026-11-21T12:00:00Z");
    const progress: number[] = [];
    const first = await generateTraffic(t.testDb.db, who.tenantId, {
      days: 7,
      clicks: 2500,
      now,
      seed: 7,
      batchSize: 1000,
      onProgress: (p) => progress.push(p.clicks),
    });
    expect(first.clicks).toBe(2500);
    expect(progress).toEqual([1000, 2000, 2500]);
    expect(first.conversions).toBeGreaterThan(0);
    const second = await generateTraffic(t.testDb.db, who.tenantId, { days: 7, clicks: 500, now, seed: 8 });
    expect(second.links).toBe(first.links);

    const raw = await one<{ clicks: number; first: Date; last: Date }>(
      "select count(*)::int as clicks, min(at) as first, max(at) as last from clicks where tenant_id = $1",
      [who.tenantId],
    );
    expect(raw.clicks).toBe(3000);
    expect(new Date(raw.first).getTime()).toBeGreaterThanOrEqual(now.getTime() - 7 * 86_400_000);
    expect(new Date(raw.last).getTime()).toBeLessThanOrEqual(now.getTime());

    const rolled = await one<{ clicks: number; unique: number; deposits: number; amount: string }>(
      `select sum(clicks)::int as clicks, sum(unique_clicks)::int as unique, sum(deposit_count)::int as deposits,
              sum(deposit_amount)::text as amount
         from daily_rollups where tenant_id = $1`,
      [who.tenantId],
    );
    const counted = await one<{ unique: number; deposits: number; amount: string }>(
      `select (select count(*)::int from clicks where tenant_id = $1 and is_unique) as unique,
              (select count(*)::int from conversions where tenant_id = $1 and type = 'Deposit') as deposits,
              (select coalesce(sum(value), 0)::text from conversions where tenant_id = $1 and type = 'Deposit') as amount`,
      [who.tenantId],
    );
    expect(rolled.clicks).toBe(3000);
    expect(rolled.unique).toBe(counted.unique);
    expect(rolled.deposits).toBe(counted.deposits);
    expect(Number(rolled.amount)).toBeCloseTo(Number(counted.amount), 4);

    const unattributed = await one<{ n: number }>(
      "select count(*)::int as n from conversions where tenant_id = $1 and not attributed",
      [who.tenantId],
    );
    expect(unattributed.n).toBe(0);
  });
});

describe("the demo's shape, day by day", () => {
  it("spreads conversions over the days (no pile at the seeding minute) in four currencies, none after now", async () => {
    const now = new Date("2026-11-21T12:00:00Z");
    const them = await seedTenancy(t);
    await generateTraffic(t.testDb.db, them.tenantId, {
      days: 30,
      clicks: 6000,
      now,
      seed: 5,
      currencies: DEMO_CURRENCIES,
    });
    const busiest = await one<{ n: number; total: number; last: Date }>(
      `select max(n)::int as n, sum(n)::int as total, max(last) as last from (
         select count(*) as n, max(occurred_at) as last from conversions where tenant_id = $1
          group by date_trunc('minute', occurred_at)) m`,
      [them.tenantId],
    );
    // About a thirtieth of them a day: no single minute may hold even a tenth of a day's.
    expect(busiest.n).toBeLessThanOrEqual(Math.max(3, busiest.total / 30 / 10));
    expect(new Date(busiest.last).getTime()).toBeLessThanOrEqual(now.getTime());
    const ftdsAtNow = await one<{ n: number }>(
      "select count(*)::int as n from conversions where tenant_id = $1 and occurred_at = $2",
      [them.tenantId, now],
    );
    expect(ftdsAtNow.n).toBe(0);
    const currencies = await t.testDb.db.query<{ currency: string }>(
      "select distinct currency from conversions where tenant_id = $1 and currency is not null order by 1",
      [them.tenantId],
    );
    expect(currencies.map((c) => c.currency)).toEqual(["EUR", "GBP", "SEK", "USD"]);
  });
});

describe("--days and the raw-event retention", () => {
  it("fills the longest span the seed allows (the retention) without a conversion refused", async () => {
    const now = new Date("2026-11-21T12:00:00Z");
    const them = await seedTenancy(t);
    const summary = await generateTraffic(t.testDb.db, them.tenantId, {
      days: RAW_EVENT_RETENTION_DAYS,
      clicks: 1500,
      now,
      seed: 11,
    });
    expect(summary.clicks).toBe(1500);
    expect(summary.conversions).toBeGreaterThan(0);
  });

  it("refuses a longer span in one line naming the limit, exiting 1 before opening the database", async () => {
    const dir = await mkdtemp(join(tmpdir(), "seed-days-"));
    const dataDir = join(dir, "data");
    try {
      const child = spawn(
        process.execPath,
        ["--import", "tsx", "scripts/seed.ts", "--days", String(RAW_EVENT_RETENTION_DAYS + 1), "--clicks", "5"],
        // A database the seed cannot reach: it must not try.
        {
          env: { PATH: process.env.PATH ?? "", DATA_DIR: dataDir, DATABASE_URL: "postgres://nobody@127.0.0.1:1/none" },
          stdio: ["ignore", "pipe", "pipe"],
        },
      );
      let stdout = "";
      let stderr = "";
      child.stdout?.on("data", (chunk: Buffer) => {
        stdout += chunk.toString();
      });
      child.stderr?.on("data", (chunk: Buffer) => {
        stderr += chunk.toString();
      });
      const code = await new Promise<number | null>((resolve) => child.on("exit", (c) => resolve(c)));
      expect(code, stderr).toBe(1);
      expect(stdout).toBe("");
      expect(stderr).toBe(
        `--days must be at most ${RAW_EVENT_RETENTION_DAYS} (the raw-event retention: older conversions are refused), got ${RAW_EVENT_RETENTION_DAYS + 1}\n`,
      );
      expect(existsSync(dataDir)).toBe(false);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }, 30_000);
});
