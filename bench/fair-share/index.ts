import type { AddressInfo } from "node:net";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createApiToken } from "../../src/features/api-tokens/index.js";
import { createTenant } from "../../src/features/tenants/index.js";
import { DAY_MS } from "../../src/platform/durations.js";
import { type Database, forEachDatabase, reporter, round, settings } from "../shared.js";

/**
 * Fair share of report work (docs/limits.md, "Reports and MCP: fair share"): while tenant A
 * runs heavy reports, how long does tenant B wait for a cheap request?
 *
 * Tenant A has BENCH_FAIR_CLICKS raw clicks (default 300k on PostgreSQL, 30k on PGlite) in one
 * UTC day, written straight into the table; its heavy report is the performance report by
 * link x country over a window inside that day, which reads every one of them raw (the partial
 * edge days of an exact window). Tenant B has a small catalog. The app listens on a real port,
 * with the default report share (2 at once per tenant, 4 waiting, a reserve of 3 of the pool's
 * 10 connections) and no request limit in the way.
 *
 * Figures, per database (BENCH_DATABASES, default both):
 *   single-report    A's heavy report alone, BENCH_FAIR_SINGLE (default 5) sequential runs: the
 *                    longest single report statement's order of magnitude
 *   idle             B's `GET /api/v1/brands` (BENCH_FAIR_LOOPS loops, default 2, one request at a
 *                    time each) for 3 s with nothing else running: p50/p99/max
 *   mcp-batch-20     the same while A sends one MCP JSON-RPC batch of 20 heavy run_report calls;
 *                    with the batch's duration, B's `/api/health` p99, and goalMet for B's p99
 *                    under 250 ms (PostgreSQL; on PGlite: under the single report plus 100 ms)
 *   parallel-20      the same while A sends 20 parallel GETs of the heavy report: how many were
 *                    answered 200 and 429 (with Retry-After)
 */

const BENCH = "fair-share";
const GOAL_P99_MS = 250;
const report = reporter(BENCH);

/** A positive integer from the environment, or the fallback when unset. */
function intSetting(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw.replaceAll("_", ""));
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return value;
}

function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length))) - 1] as number;
}

function summary(times: number[]) {
  const sorted = [...times].sort((x, y) => x - y);
  return {
    requests: sorted.length,
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted.at(-1) ?? Number.NaN),
  };
}

/** `loops` clients, each sending one request at a time to `url` until `until` settles: latencies. */
async function whileRunning(url: string, headers: Record<string, string>, loops: number, until: Promise<unknown>) {
  let done = false;
  void until.finally(() => {
    done = true;
  });
  const times: number[] = [];
  let failed = 0;
  await Promise.all(
    Array.from({ length: loops }, async () => {
      while (!done) {
        const started = performance.now();
        const res = await fetch(url, { headers });
        await res.arrayBuffer();
        if (res.status !== 200) failed += 1;
        if (!done) times.push(performance.now() - started);
      }
    }),
  );
  return { times, failed };
}

async function bench(kind: Database["db"]["kind"], { db }: Database): Promise<void> {
  const clicks = intSetting("BENCH_FAIR_CLICKS", kind === "postgres" ? 300_000 : 30_000);
  const loops = intSetting("BENCH_FAIR_LOOPS", 2);
  const singles = intSetting("BENCH_FAIR_SINGLE", 5);
  const config = loadConfig({
    SEED_DEMO: "false",
    LOG_LEVEL: "silent",
    RATE_LIMIT_PER_MINUTE: "1000000",
  });
  const { app } = await buildApp({
    config,
    db,
    jwtSecret: "bench-jwt-secret-that-is-long-enough-0123456789",
    logger: false,
    healthCacheMs: 0,
  });
  await app.listen({ port: 0, host: "127.0.0.1" });
  const base = `http://127.0.0.1:${(app.server.address() as AddressInfo).port}`;
  try {
    const now = new Date();
    const actor = { type: "system", name: "bench" } as const;
    const tenants: { id: string; key: string; catalog: Record<string, number> }[] = [];
    for (const name of ["A", "B"]) {
      const tenant = await createTenant(db, { name: `Fair share ${name}` }, actor, now);
      const token = await createApiToken(db, tenant.id, { name: "bench", scopes: ["reports.read"] }, actor, now);
      const key = `ApiKey ${token.token}`;
      const post = async (path: string, body: Record<string, unknown>) => {
        const res = await fetch(`${base}/api/v1/${path}`, {
          method: "POST",
          headers: { authorization: key, "content-type": "application/json" },
          body: JSON.stringify(body),
        });
        if (res.status !== 201) throw new Error(`POST ${path}: ${res.status} ${await res.text()}`);
        return ((await res.json()) as { data: { id: number } }).data.id;
      };
      const brandId = await post("brands", { name: "Brand" });
      const programId = await post("programs", { name: "Program", brandIds: [brandId] });
      const accountId = await post("accounts", { name: "Account", programId, username: "aff" });
      const linkId = await post("links", {
        name: "Link",
        accountId,
        brandId,
        url: "https://brand.example/?c={clickId}",
      });
      const trafficSourceId = await post("traffic-sources", { name: "Source" });
      tenants.push({ id: tenant.id, key, catalog: { brandId, programId, accountId, linkId, trafficSourceId } });
    }
    const [a, b] = tenants as [(typeof tenants)[0], (typeof tenants)[0]];
    const day = Math.floor(now.getTime() / DAY_MS) * DAY_MS - DAY_MS;
    report.progress(`${kind}: writing ${clicks} raw clicks of tenant A`);
    for (let from = 1; from <= clicks; from += 100_000) {
      const to = Math.min(clicks, from + 99_999);
      await db.query(
        `insert into clicks (id, tenant_id, at, link_id, account_id, brand_id, program_id, traffic_source_id, is_unique, country)
         select 'clk_fair_' || g, $1, $2::timestamptz + (g * ${Math.floor((DAY_MS - 10) / clicks)}) * interval '1 ms',
                $3, $4, $5, $6, $7, g % 3 = 0, (array['DE', 'FR', 'GB', 'US', 'BR'])[1 + g % 5]
         from generate_series(${from}, ${to}) g`,
        [
          a.id,
          new Date(day).toISOString(),
          a.catalog.linkId,
          a.catalog.accountId,
          a.catalog.brandId,
          a.catalog.programId,
          a.catalog.trafficSourceId,
        ],
      );
    }
    if (kind === "postgres") await db.query("analyze clicks");
    const parameters = {
      fields: "link,country",
      stats: "clicks,uniqueClicks",
      conversionDateFrom: new Date(day + 1).toISOString(),
      conversionDateTo: new Date(day + DAY_MS - 2).toISOString(),
    };
    const reportUrl = `${base}/api/v1/reports/events/performance?${new URLSearchParams(parameters)}`;
    const brandsUrl = `${base}/api/v1/brands`;
    const healthUrl = `${base}/api/health`;

    const singleTimes: number[] = [];
    for (let i = 0; i < singles; i++) {
      const started = performance.now();
      const res = await fetch(reportUrl, { headers: { authorization: a.key } });
      const body = (await res.json()) as { data: { clicks: number }[] };
      if (res.status !== 200) throw new Error(`heavy report: ${res.status}`);
      if (i === 0 && body.data.reduce((n, row) => n + row.clicks, 0) !== clicks)
        throw new Error("report misses clicks");
      singleTimes.push(performance.now() - started);
    }
    const single = summary(singleTimes);
    report.emit({ figure: "single-report", db: kind, clicks, ...single });

    const idleFor = new Promise((resolve) => setTimeout(resolve, 3000));
    const idle = await whileRunning(brandsUrl, { authorization: b.key }, loops, idleFor);
    report.emit({ figure: "idle", db: kind, request: "GET /api/v1/brands", ...summary(idle.times) });

    // One MCP batch of 20 heavy reports from A.
    const batchBody = Array.from({ length: 20 }, (_, i) => ({
      jsonrpc: "2.0",
      id: i + 1,
      method: "tools/call",
      params: { name: "run_report", arguments: { report: "performance", parameters } },
    }));
    const batchStarted = performance.now();
    const batch = fetch(`${base}/mcp`, {
      method: "POST",
      headers: {
        authorization: a.key,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      body: JSON.stringify(batchBody),
    }).then(async (res) => {
      const answers = (await res.json()) as { result?: { isError?: boolean } }[];
      return { status: res.status, ok: answers.filter((x) => x.result && !x.result.isError).length };
    });
    const batchDone = batch.then(() => performance.now() - batchStarted);
    const [cheap, health] = await Promise.all([
      whileRunning(brandsUrl, { authorization: b.key }, loops, batch),
      whileRunning(healthUrl, {}, 1, batch),
    ]);
    const batchResult = await batch;
    const cheapSummary = summary(cheap.times);
    const goal = kind === "postgres" ? GOAL_P99_MS : single.maxMs + 100;
    report.emit({
      figure: "mcp-batch-20",
      db: kind,
      request: "GET /api/v1/brands",
      batchMs: round(await batchDone),
      batchStatus: batchResult.status,
      reportsAnswered: batchResult.ok,
      ...cheapSummary,
      failed: cheap.failed,
      healthP99Ms: summary(health.times).p99Ms,
      goalP99Ms: round(goal),
      goalMet: cheapSummary.p99Ms < goal,
    });

    // 20 parallel report requests from A.
    const parallelStarted = performance.now();
    const parallel = Promise.all(
      Array.from({ length: 20 }, async () => {
        const res = await fetch(reportUrl, { headers: { authorization: a.key } });
        await res.arrayBuffer();
        return { status: res.status, retryAfter: res.headers.get("retry-after") };
      }),
    );
    const cheapParallel = await whileRunning(brandsUrl, { authorization: b.key }, loops, parallel);
    const answers = await parallel;
    const parallelSummary = summary(cheapParallel.times);
    report.emit({
      figure: "parallel-20",
      db: kind,
      request: "GET /api/v1/brands",
      burstMs: round(performance.now() - parallelStarted),
      answered200: answers.filter((x) => x.status === 200).length,
      answered429: answers.filter((x) => x.status === 429 && x.retryAfter !== null).length,
      ...parallelSummary,
      failed: cheapParallel.failed,
      goalP99Ms: round(goal),
      goalMet: parallelSummary.p99Ms < goal,
    });
  } finally {
    await app.close();
  }
}

export async function run(): Promise<void> {
  const s = settings();
  report.progress("two tenants: A runs heavy reports, B times a cheap request");
  await forEachDatabase(s, report, bench);
}
