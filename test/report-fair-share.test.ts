import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../src/config.js";
import { DAY_MS } from "../src/platform/durations.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";

// Fair share of report work (docs/limits.md, "Reports and MCP: fair share"): one tenant's burst
// of heavy reports (an MCP batch of 20, or 20 parallel requests) must not make another tenant's
// cheap request wait for it. Before, the batch's 20 reports ran at once: on PGlite another
// tenant's `GET /brands` queued behind all 20 statements, on PostgreSQL behind the pool they held.
// Bounds are ratios to the burst's own duration, never absolute times: the machine is shared.

/** Raw clicks each heavy report reads: about 0.1-0.3 s of one statement on either database. */
const CLICKS = { pglite: 12_000, postgres: 30_000 };
type Response = Awaited<ReturnType<TestApp["call"]>>;

let t: TestApp;
let a: Tenancy;
let b: Tenancy;
let fixture: CatalogFixture;
/** A window inside one UTC day: its partial edges are read from the raw clicks, every one of them. */
let window: { conversionDateFrom: string; conversionDateTo: string };
let clicks: number;

const HEAVY = () => ({ fields: "link,country", stats: "clicks,uniqueClicks", ...window });

function reportCall(id: number) {
  return {
    jsonrpc: "2.0",
    id,
    method: "tools/call",
    params: { name: "run_report", arguments: { report: "performance", parameters: HEAVY() } },
  };
}

function mcp(who: Tenancy, payload: unknown): Promise<Response> {
  return t.call({
    method: "POST",
    url: "/mcp",
    headers: { authorization: who.apiKey, accept: "application/json, text/event-stream" },
    payload: payload as Record<string, unknown>,
  });
}

function heavyReport(who: Tenancy): Promise<Response> {
  return t.call({
    method: "GET",
    url: `/api/v1/reports/events/performance?${new URLSearchParams(HEAVY())}`,
    headers: { authorization: who.apiKey },
  });
}

/**
 * Tenant B's cheap request, one after another while `burst` runs: each latency in ms. Every
 * answer must be a 200.
 */
async function cheapWhile(burst: Promise<unknown>): Promise<number[]> {
  let done = false;
  void burst.finally(() => {
    done = true;
  });
  const latencies: number[] = [];
  while (!done) {
    const started = performance.now();
    const res = await t.call({ method: "GET", url: "/api/v1/brands", headers: { authorization: b.apiKey } });
    expect(res.statusCode, res.body).toBe(200);
    if (!done) latencies.push(performance.now() - started);
  }
  return latencies;
}

async function timed<T>(work: () => Promise<T>): Promise<{ value: T; ms: number }> {
  const started = performance.now();
  const value = await work();
  return { value, ms: performance.now() - started };
}

function expect429(res: Response): void {
  expect(res.statusCode, res.body).toBe(429);
  const retryAfter = Number(res.headers["retry-after"]);
  expect(Number.isInteger(retryAfter)).toBe(true);
  expect(retryAfter).toBeGreaterThanOrEqual(1);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

beforeAll(async () => {
  // B asks again and again while A's burst runs: no per-key request limit in the way.
  t = await startTestApp({ app: { rateLimit: { max: 10_000_000 } } });
  a = await seedTenancy(t, { key: { scopes: ["reports.read"] } });
  b = await seedTenancy(t, { key: { scopes: ["reports.read"] } });
  fixture = await seedCatalog(t, a);
  await seedCatalog(t, b);
  // Raw clicks of tenant A, yesterday: written straight into the table (the report reads them
  // raw for a window inside the day; no rollup is needed).
  clicks = CLICKS[t.testDb.kind];
  const day = Math.floor(t.clock.now().getTime() / DAY_MS) * DAY_MS - DAY_MS;
  await t.ctx.db.query(
    `insert into clicks (id, tenant_id, at, link_id, account_id, brand_id, program_id, traffic_source_id, is_unique, country)
     select 'clk_fair_' || g, $1, $2::timestamptz + (g * ${Math.floor((DAY_MS - 10) / clicks)}) * interval '1 ms', $3, $4, $5, $6, $7, g % 3 = 0,
            (array['DE', 'FR', 'GB', 'US', 'BR'])[1 + g % 5]
     from generate_series(1, ${clicks}) g`,
    [
      a.tenantId,
      new Date(day).toISOString(),
      fixture.linkId,
      fixture.accountId,
      fixture.brandId,
      fixture.programId,
      fixture.trafficSourceId,
    ],
  );
  window = {
    conversionDateFrom: new Date(day + 1).toISOString(),
    conversionDateTo: new Date(day + DAY_MS - 2).toISOString(),
  };
  // The keys verified once (cached), the report checked to read every click.
  const first = await heavyReport(a);
  expect(first.statusCode, first.body).toBe(200);
  expect(first.json().data.reduce((n: number, row: { clicks: number }) => n + row.clicks, 0)).toBe(clicks);
  expect(
    (await t.call({ method: "GET", url: "/api/v1/brands", headers: { authorization: b.apiKey } })).statusCode,
  ).toBe(200);
}, 120_000);

afterAll(async () => {
  await t?.close();
});

describe("one tenant's reports leave the others their share", () => {
  it("runs an MCP batch of 20 reports one after another, each metered, while another tenant's cheap requests answer", async () => {
    const batch = timed(() =>
      mcp(
        a,
        Array.from({ length: 20 }, (_, i) => reportCall(i + 1)),
      ),
    );
    const latencies = await cheapWhile(batch);
    const { value: res, ms: batchMs } = await batch;
    expect(res.statusCode, res.body).toBe(200);
    const answers = JSON.parse(res.body) as { id: number; result: { isError?: boolean; structuredContent: unknown } }[];
    expect(answers).toHaveLength(20);
    for (const answer of answers) expect(answer.result.isError, JSON.stringify(answer)).not.toBe(true);
    // B got answers while the batch ran, each far sooner than the batch: before, B's request
    // waited behind the batch's 20 statements (PGlite) or for a connection they all held.
    expect(latencies.length).toBeGreaterThanOrEqual(3);
    expect(Math.max(...latencies)).toBeLessThan(batchMs / 3);
    // Each call of the batch is metered as one request.
    await t.ctx.usage.flush();
    const [usage] = await t.ctx.db.query<{ n: number }>(
      "select coalesce(sum(calls), 0)::int as n from api_usage where token_id = $1 and route = '/mcp'",
      [a.apiKeyId],
    );
    expect(usage?.n).toBe(20);
    // The batch's slot is given back.
    expect(t.ctx.reports.running).toBe(0);
  });

  it("runs 2 of 20 parallel report requests at once, queues 4 and refuses the rest with 429 and Retry-After", async () => {
    const { perTenant, queuePerTenant } = t.ctx.reports.options;
    expect([perTenant, queuePerTenant]).toEqual([2, 4]);
    const burst = timed(() => Promise.all(Array.from({ length: 20 }, () => heavyReport(a))));
    const latencies = await cheapWhile(burst);
    const { value: answers, ms: burstMs } = await burst;
    const ok = answers.filter((res) => res.statusCode === 200);
    const refused = answers.filter((res) => res.statusCode !== 200);
    // All 20 arrive long before the first report ends (each reads every raw click).
    expect(ok.length).toBeGreaterThanOrEqual(perTenant + queuePerTenant);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    for (const res of refused) {
      expect429(res);
      expect(res.json()).toEqual({
        code: "rate_limited",
        message: "Too many reports at once for this tenant: 2 run and 4 wait at most; retry later",
        data: null,
      });
    }
    expect(latencies.length).toBeGreaterThanOrEqual(1);
    expect(Math.max(...latencies)).toBeLessThan(burstMs / 2);
    expect(t.ctx.reports.running).toBe(0);
  });

  it("refuses parallel MCP posts past the tenant's queue with a JSON-RPC 429 and Retry-After; another tenant still runs reports", async () => {
    const posts = Promise.all(Array.from({ length: 20 }, (_, i) => mcp(a, reportCall(i + 1))));
    // Tenant B's own report is not refused for A's burst.
    const own = await heavyReport(b);
    expect(own.statusCode, own.body).toBe(200);
    const answers = await posts;
    const refused = answers.filter((res) => res.statusCode === 429);
    expect(refused.length).toBeGreaterThanOrEqual(10);
    for (const res of refused) {
      expect429(res);
      expect(JSON.parse(res.body)).toEqual({
        jsonrpc: "2.0",
        error: {
          code: -32029,
          message: "Too many reports at once for this tenant: 2 run and 4 wait at most; retry later",
        },
        id: null,
      });
    }
    for (const res of answers.filter((r) => r.statusCode !== 429)) expect(res.statusCode, res.body).toBe(200);
    expect(t.ctx.reports.running).toBe(0);
  });

  it("lets reports of all tenants together hold the pool less a reserve of 3 (PostgreSQL), no cap on PGlite", async () => {
    const { totalSlots } = t.ctx.reports.options;
    if (t.testDb.kind === "postgres") {
      expect(t.ctx.db.poolSize).toBe(5);
      expect(totalSlots).toBe(2);
    } else expect(totalSlots).toBe(Number.POSITIVE_INFINITY);
    // Two tenants at once, each within its own share: never more running than the pool's share.
    let most = 0;
    const sample = setInterval(() => {
      most = Math.max(most, t.ctx.reports.running);
    }, 1);
    const both = Promise.all([
      ...Array.from({ length: 4 }, () => heavyReport(a)),
      ...Array.from({ length: 4 }, () => heavyReport(b)),
    ]);
    const latencies = await cheapWhile(both);
    clearInterval(sample);
    for (const res of await both) expect([200, 429]).toContain(res.statusCode);
    expect(most).toBeGreaterThanOrEqual(1);
    expect(most).toBeLessThanOrEqual(Math.min(totalSlots, 4));
    expect(latencies.length).toBeGreaterThanOrEqual(1);
  });
});

describe("configuration", () => {
  it("reads the report share from the environment and refuses a bad value naming the variable", () => {
    expect(loadConfig({ SEED_DEMO: "false" }).reportShare).toEqual({
      concurrencyPerTenant: 2,
      queuePerTenant: 4,
      poolReserve: 3,
    });
    expect(
      loadConfig({
        SEED_DEMO: "false",
        REPORT_CONCURRENCY_PER_TENANT: "5",
        REPORT_QUEUE_PER_TENANT: "0",
        REPORT_POOL_RESERVE: "1",
      }).reportShare,
    ).toEqual({ concurrencyPerTenant: 5, queuePerTenant: 0, poolReserve: 1 });
    expect(() => loadConfig({ REPORT_CONCURRENCY_PER_TENANT: "0" })).toThrow(/REPORT_CONCURRENCY_PER_TENANT/);
    expect(() => loadConfig({ REPORT_QUEUE_PER_TENANT: "many" })).toThrow(/REPORT_QUEUE_PER_TENANT/);
    expect(() => loadConfig({ REPORT_POOL_RESERVE: "-1" })).toThrow(/REPORT_POOL_RESERVE/);
  });
});
