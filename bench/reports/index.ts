import { randomBytes } from "node:crypto";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createApiToken } from "../../src/features/api-tokens/index.js";
import { seedDemoRates } from "../../src/features/demo/rates.js";
import { generateTraffic } from "../../src/features/demo/traffic.js";
import { findReport, foldRollupBlocks } from "../../src/features/reports/index.js";
import { createTenant } from "../../src/features/tenants/index.js";
import { type Db, migrate, type Queryable, statementText } from "../../src/platform/db/index.js";
import { DAY_MS } from "../../src/platform/durations.js";
import {
  baseUrl,
  type Database,
  forEachDatabase,
  type Latency,
  measureSequential,
  reporter,
  round,
  type Settings,
  settings,
} from "../shared.js";

/**
 * Reports: how long the reports take on a big tenant, against a plain count over the rollups.
 *
 * A dataset is made with the seed generator (npm run seed's generateTraffic, through the tracking
 * code paths): BENCH_REPORTS_CLICKS clicks over BENCH_REPORTS_DAYS days (default 90, the last
 * one today, filled to its end) and BENCH_REPORTS_ACCOUNTS accounts, about
 * BENCH_REPORTS_CONVERSIONS_PER_CLICK conversions per click (default 0.1). Defaults: 10M clicks
 * and 10k accounts on PostgreSQL, 200k clicks and 1k accounts on PGlite. On PostgreSQL it lives
 * in the schema BENCH_REPORTS_SCHEMA (default bench_reports), kept after the run with a marker row
 * naming its size: a later run with the same size reuses it and only times the queries (another
 * size replaces it). BENCH_REPORTS_CONCURRENCY (default 3) batches are written at once while
 * generating on PostgreSQL.
 *
 * Figures, per database (BENCH_DATABASES, default both; PostgreSQL skipped when unreachable):
 *   dataset         generated or reused, its size, and how long generation took (clicks/s)
 *   count-rollups   `select count(*) from daily_rollups` through the db handle: the baseline
 *   date-90d, account-source-30d, week-brand-country-type-90d, accounts-composite-page3, hour-2d, and
 *   date-90d-hours, account-source-30d-hours, account-source-30d-hours-past, account-source-2h,
 *   week-brand-country-type-90d-hours, accounts-composite-page3-hours (date-time windows with
 *   hour and minute edges, whose partial edge days are read from the raw events)
 *                   GET on the real app with an API key, BENCH_REPORTS_REQUESTS (default 30)
 *                   sequential requests after BENCH_REPORTS_WARMUP (default 5); p50/p95/mean, the
 *                   ratio of p50 to the baseline's, and goalMet for p50 <= 100 ms; each also as
 *                   <figure>-in-EUR, its amounts converted from the dataset's USD day by day
 *                   (vsUnconverted: its p50 over the shape's own), and the whole-day shapes as
 *                   <figure>-new-york and <figure>-kolkata, their days local to that zone (vsUtc)
 *   device-os-browser-30d, date-device-7d (device_rollups), sub-id-7d (sub_id_a_rollups; goal p50
 *                   <= 300 ms) and sub-id-account-7d (no rollup: the raw events; the same goal)
 * BENCH_REPORTS_FIGURES (a comma list of figures) times only those shapes and their variants.
 * With BENCH_REPORTS_EXPLAIN=1, the plan (EXPLAIN ANALYZE, BUFFERS) of the SQL behind each figure
 * that misses the goal goes to stderr (BENCH_REPORTS_EXPLAIN=all: of every figure).
 */

const BENCH = "reports";
const GOAL_P50_MS = 100;
const DEFAULT_SCHEMA = "bench_reports";
const MARKER = "bench_reports_dataset";
const SYSTEM = { type: "system", name: "bench" } as const;
const report = reporter(BENCH);

interface Spec {
  clicks: number;
  accounts: number;
  days: number;
  conversionsPerClick: number;
  seed: number;
}

interface Options {
  spec: Record<Db["kind"], Spec>;
  concurrency: number;
  requests: number;
  warmup: number;
  schema: string;
  explain: "off" | "missed" | "all";
  /** Only these shapes (and their variants) are timed; undefined: every one. */
  figures: string[] | undefined;
}

function envNumber(name: string, fallback: number, { integer = true, allowZero = false } = {}): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw.replaceAll("_", ""));
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !allowZero) || (integer && !Number.isInteger(value))) {
    const what = `${allowZero ? "non-negative" : "positive"} ${integer ? "integer" : "number"}`;
    throw new Error(`${name} must be a ${what}, got '${raw}'`);
  }
  return value;
}

function explainSetting(raw: string | undefined): Options["explain"] {
  const value = raw?.trim().toLowerCase() ?? "";
  if (value === "" || value === "0" || value === "off") return "off";
  if (value === "1" || value === "missed") return "missed";
  if (value === "all") return "all";
  throw new Error(`BENCH_REPORTS_EXPLAIN must be 1, missed or all, got '${raw}'`);
}

function options(): Options {
  const shared = {
    days: envNumber("BENCH_REPORTS_DAYS", 90),
    conversionsPerClick: envNumber("BENCH_REPORTS_CONVERSIONS_PER_CLICK", 0.1, { integer: false }),
    seed: envNumber("BENCH_REPORTS_SEED", 42),
  };
  const sized = (clicks: number, accounts: number): Spec => ({
    ...shared,
    clicks: envNumber("BENCH_REPORTS_CLICKS", clicks),
    accounts: envNumber("BENCH_REPORTS_ACCOUNTS", accounts),
  });
  return {
    spec: { pglite: sized(200_000, 1_000), postgres: sized(10_000_000, 10_000) },
    concurrency: envNumber("BENCH_REPORTS_CONCURRENCY", 3),
    requests: envNumber("BENCH_REPORTS_REQUESTS", 30),
    warmup: envNumber("BENCH_REPORTS_WARMUP", 5, { allowZero: true }),
    schema: process.env.BENCH_REPORTS_SCHEMA?.trim() || DEFAULT_SCHEMA,
    explain: explainSetting(process.env.BENCH_REPORTS_EXPLAIN),
    figures: process.env.BENCH_REPORTS_FIGURES?.split(",")
      .map((f) => f.trim())
      .filter((f) => f !== ""),
  };
}

interface Dataset {
  tenantId: string;
  /** Where the traffic ends: the report windows end on this UTC day. */
  now: Date;
  status: "generated" | "reused";
  generation: Record<string, number>;
}

async function count(db: Db, sql: string, params: unknown[] = []): Promise<number> {
  const [row] = await db.query<{ n: number }>(sql, params);
  return Number(row?.n ?? 0);
}

/** The marker table: one row per complete dataset in the schema, written once generation is done. */
async function ensureMarker(db: Db): Promise<void> {
  await db.query(
    `create table if not exists ${MARKER} (
       spec jsonb primary key, tenant_id text not null, traffic_end timestamptz not null, generation jsonb not null)`,
  );
}

/** The dataset the marker names, when it was made with this spec and its tenant is still there. */
async function reusable(db: Db, spec: Spec): Promise<Dataset | null> {
  await ensureMarker(db);
  const [row] = await db.query<{ tenant_id: string; traffic_end: Date; generation: Record<string, number> }>(
    `select m.tenant_id, m.traffic_end, m.generation from ${MARKER} m join tenants t on t.id = m.tenant_id
      where m.spec = $1::jsonb`,
    [JSON.stringify(spec)],
  );
  if (!row) return null;
  return { tenantId: row.tenant_id, now: new Date(row.traffic_end), status: "reused", generation: row.generation };
}

/** A new tenant filled by the seed generator; on PostgreSQL in an emptied schema, then analyzed. */
async function generate(kind: Db["kind"], database: Database, spec: Spec, o: Options): Promise<Dataset> {
  const { db } = database;
  if (database.schema !== undefined) {
    report.progress(`${kind}: no dataset of this size in schema ${database.schema}; emptying it`);
    await db.exec(`drop schema ${database.schema} cascade; create schema ${database.schema}`);
    await migrate(db);
  }
  const made = new Date();
  const tenant = await createTenant(db, { name: "Bench reports tenant" }, SYSTEM, made);
  // The traffic fills today to its end, as a report read late in the day sees it: the most rows
  // the day not yet folded into blocks can hold, whatever the hour the dataset is made.
  const trafficEnd = new Date((Math.floor(made.getTime() / DAY_MS) + 1) * DAY_MS - 1);
  // Conversions in the tenant's own currency (USD, the default): a report in it converts nothing,
  // the same report in EUR converts every amount (the "-in-EUR" figures).
  const base = {
    days: spec.days,
    now: trafficEnd,
    seed: spec.seed,
    conversionsPerClick: spec.conversionsPerClick,
    currencies: ["USD"],
  };
  report.progress(`${kind}: creating a catalog of ${spec.accounts} accounts`);
  let started = performance.now();
  // The catalog is stamped when it is made, not at the traffic's end.
  await generateTraffic(db, tenant.id, { ...base, now: made, clicks: 0, accounts: spec.accounts });
  const catalogS = (performance.now() - started) / 1000;
  report.progress(`${kind}: catalog in ${round(catalogS, 1)}s; generating ${spec.clicks} clicks`);
  started = performance.now();
  let nextReport = 0;
  const summary = await generateTraffic(db, tenant.id, {
    ...base,
    clicks: spec.clicks,
    accounts: spec.accounts,
    concurrency: o.concurrency,
    onProgress: ({ clicks, conversions }) => {
      if (clicks < nextReport && clicks < spec.clicks) return;
      nextReport = clicks + Math.max(5000, Math.round(spec.clicks / 20));
      const s = (performance.now() - started) / 1000;
      const rate = clicks / Math.max(s, 0.001);
      report.progress(
        `${kind}: ${clicks}/${spec.clicks} clicks, ${conversions} conversions, ${Math.round(rate)} clicks/s, ` +
          `eta ${Math.round((spec.clicks - clicks) / Math.max(rate, 1))}s`,
      );
    },
  });
  const trafficS = (performance.now() - started) / 1000;
  started = performance.now();
  if (kind === "postgres") {
    // What autovacuum would have done by the time anyone reads the reports: fresh statistics.
    report.progress(`${kind}: vacuum analyze`);
    await db.exec(
      "vacuum analyze daily_rollups, brand_rollups, account_rollups, account_source_rollups, device_rollups, sub_id_a_rollups, sub_id_b_rollups, clicks, conversions, accounts, links",
    );
  }
  const analyzeS = (performance.now() - started) / 1000;
  const generation = {
    catalogS: round(catalogS, 1),
    trafficS: round(trafficS, 1),
    analyzeS: round(analyzeS, 1),
    totalS: round(catalogS + trafficS + analyzeS, 1),
    clicksPerS: Math.round(summary.clicks / Math.max(trafficS, 0.001)),
    conversions: summary.conversions,
    concurrency: kind === "postgres" ? o.concurrency : 1,
  };
  if (database.schema !== undefined) {
    await ensureMarker(db);
    await db.query(`insert into ${MARKER} (spec, tenant_id, traffic_end, generation) values ($1::jsonb, $2, $3, $4)`, [
      JSON.stringify(spec),
      tenant.id,
      trafficEnd,
      JSON.stringify(generation),
    ]);
  }
  return { tenantId: tenant.id, now: trafficEnd, status: "generated", generation };
}

const day = (date: Date, daysBefore = 0): string =>
  new Date(date.getTime() - daysBefore * DAY_MS).toISOString().slice(0, 10);

/** The timed requests: path and query under /api/v1, windows ending on the traffic's last day. */
interface Shape {
  figure: string;
  /** The registry's report behind the path. */
  report: string;
  path: string;
  query: Record<string, string>;
  /** Its p50 goal in ms when not GOAL_P50_MS: the sub-id breakdowns, read from the raw events. */
  goalMs?: number;
}

/** The goal of a 7-day sub-id report (issue: p50 <= 300 ms at 10M clicks on PostgreSQL). */
const SUB_ID_GOAL_P50_MS = 300;

/** A date-time on the UTC day `daysBefore` days before `date`, at `time` (HH:MM). */
const at = (date: Date, daysBefore: number, time: string): string => `${day(date, daysBefore)}T${time}:00Z`;

function shapes(now: Date): Shape[] {
  const last90 = { conversionDateFrom: day(now, 89), conversionDateTo: day(now) };
  // The same windows with hour and minute edges: the partial edge days are read from the raw events.
  const last90Hours = { conversionDateFrom: at(now, 89, "07:23"), conversionDateTo: at(now, 0, "16:41") };
  return [
    {
      figure: "date-90d",
      report: "performance",
      path: "/reports/events/performance",
      query: { fields: "date", stats: "clicks,signups,ftd,commission", ...last90 },
    },
    {
      figure: "account-source-30d",
      report: "performance",
      path: "/reports/events/performance",
      query: {
        fields: "account,trafficSource",
        sortBy: "-clicks",
        limit: "100",
        conversionDateFrom: day(now, 29),
        conversionDateTo: day(now),
      },
    },
    {
      figure: "week-brand-country-type-90d",
      report: "performance",
      path: "/reports/events/performance",
      query: { fields: "week,brand,country,conversionType", responseType: "table", ...last90 },
    },
    {
      figure: "accounts-composite-page3",
      report: "account-metrics",
      path: "/composites/accounts/metrics",
      query: {
        sortBy: "-clicks",
        limit: "50",
        offset: "100",
        metricsFrom: day(now, 29),
        metricsTo: day(now),
        comparisonFrom: day(now, 59),
        comparisonTo: day(now, 30),
      },
    },
    {
      // Local hours: read from the raw events in any zone.
      figure: "hour-2d",
      report: "performance",
      path: "/reports/events/performance",
      query: {
        fields: "hour",
        stats: "clicks,signups,ftd,commission",
        conversionDateFrom: day(now, 1),
        conversionDateTo: day(now),
      },
    },
    {
      figure: "date-90d-hours",
      report: "performance",
      path: "/reports/events/performance",
      query: { fields: "date", stats: "clicks,signups,ftd,commission", ...last90Hours },
    },
    {
      figure: "account-source-30d-hours",
      report: "performance",
      path: "/reports/events/performance",
      query: {
        fields: "account,trafficSource",
        sortBy: "-clicks",
        limit: "100",
        conversionDateFrom: at(now, 29, "07:23"),
        conversionDateTo: at(now, 0, "16:41"),
      },
    },
    {
      figure: "account-source-30d-hours-past",
      report: "performance",
      path: "/reports/events/performance",
      query: {
        fields: "account,trafficSource",
        sortBy: "-clicks",
        limit: "100",
        conversionDateFrom: at(now, 40, "13:05"),
        conversionDateTo: at(now, 11, "09:50"),
      },
    },
    {
      figure: "account-source-2h",
      report: "performance",
      path: "/reports/events/performance",
      query: {
        fields: "account,trafficSource",
        sortBy: "-clicks",
        limit: "100",
        conversionDateFrom: at(now, 3, "23:00"),
        conversionDateTo: at(now, 2, "01:00"),
      },
    },
    {
      figure: "week-brand-country-type-90d-hours",
      report: "performance",
      path: "/reports/events/performance",
      query: { fields: "week,brand,country,conversionType", responseType: "table", ...last90Hours },
    },
    {
      // The click's facts: device_rollups.
      figure: "device-os-browser-30d",
      report: "performance",
      path: "/reports/events/performance",
      query: {
        fields: "device,os,browser",
        sortBy: "-clicks",
        conversionDateFrom: day(now, 29),
        conversionDateTo: day(now),
      },
    },
    {
      figure: "date-device-7d",
      report: "performance",
      path: "/reports/events/performance",
      query: { fields: "date,device", conversionDateFrom: day(now, 6), conversionDateTo: day(now) },
    },
    {
      // A sub-id: its rollup.
      figure: "sub-id-7d",
      report: "performance",
      path: "/reports/events/performance",
      query: { fields: "parameterA", sortBy: "-clicks", conversionDateFrom: day(now, 6), conversionDateTo: day(now) },
      goalMs: SUB_ID_GOAL_P50_MS,
    },
    {
      // A sub-id beside an account: no rollup has both, the window's raw clicks and conversions.
      figure: "sub-id-account-7d",
      report: "performance",
      path: "/reports/events/performance",
      query: {
        fields: "parameterA,account",
        sortBy: "-clicks",
        conversionDateFrom: day(now, 6),
        conversionDateTo: day(now),
      },
      goalMs: SUB_ID_GOAL_P50_MS,
    },
    {
      figure: "accounts-composite-page3-hours",
      report: "account-metrics",
      path: "/composites/accounts/metrics",
      query: {
        sortBy: "-clicks",
        limit: "50",
        offset: "100",
        metricsFrom: at(now, 29, "07:23"),
        metricsTo: at(now, 0, "16:41"),
        comparisonFrom: at(now, 59, "07:23"),
        comparisonTo: at(now, 29, "07:22"),
      },
    },
  ];
}

/** The zones the whole-day shapes are also timed in (their days local), as `<figure>-<suffix>`. */
const ZONES: [string, string][] = [
  ["America/New_York", "new-york"],
  ["Asia/Kolkata", "kolkata"],
];

/**
 * A shape's variants: in EUR (vsUnconverted: p50 over the shape's own), and for the shapes of
 * whole days, in each zone of ZONES (vsUtc).
 */
function variants(shape: Shape): (Shape & { same: string; ratio: string })[] {
  const inEur = { ...shape, figure: `${shape.figure}-in-EUR`, query: { ...shape.query, currency: "EUR" } };
  // Dates only (no date-time) in its window parameters.
  const wholeDays = Object.entries(shape.query).every(([name, v]) => !/(From|To)$/.test(name) || !v.includes("T"));
  const zoned = wholeDays
    ? ZONES.map(([zone, suffix]) => ({
        ...shape,
        figure: `${shape.figure}-${suffix}`,
        query: { ...shape.query, timeZone: zone },
        ratio: "vsUtc",
      }))
    : [];
  return [{ ...inEur, ratio: "vsUnconverted" }, ...zoned].map((v) => ({ ...v, same: shape.figure }));
}

/** Runs the shape's report once with its SQL captured, then EXPLAIN ANALYZE of each statement. */
async function explain(db: Db, tenantId: string, shape: Shape, now: Date): Promise<string> {
  const definition = findReport(shape.report);
  if (!definition) throw new Error(`no report named ${shape.report}`);
  const statements: { sql: string; params: readonly unknown[] }[] = [];
  const capturing: Queryable = {
    query: (sql, params = []) => {
      statements.push({ sql: statementText(sql), params });
      return db.query(sql, params);
    },
    exec: (script) => db.exec(script),
  };
  await definition.run(capturing, tenantId, shape.query, now);
  const plans: string[] = [];
  for (const { sql, params } of statements) {
    const rows = await db.query<{ "QUERY PLAN": string }>(`explain (analyze, buffers) ${sql}`, params);
    plans.push(`${sql.trim()}\n-- params ${JSON.stringify(params)}\n${rows.map((r) => r["QUERY PLAN"]).join("\n")}`);
  }
  return plans.join("\n\n");
}

async function benchDatabase(kind: Db["kind"], database: Database, o: Options): Promise<void> {
  const { db } = database;
  const spec = o.spec[kind];
  const dataset =
    (database.schema === undefined ? null : await reusable(db, spec)) ?? (await generate(kind, database, spec, o));
  // What the hourly job rollup-blocks has done by the time anyone reads the reports.
  report.progress(`${kind}: folding the account rollups' closed days into blocks (job rollup-blocks)`);
  const foldStarted = performance.now();
  const fold = await foldRollupBlocks(db, new Date());
  report.progress(`${kind}: ${fold.blocks} blocks written in ${round((performance.now() - foldStarted) / 1000, 1)}s`);
  // Statistics that know the blocks, as autovacuum's analyze would have by then.
  if (kind === "postgres") await db.exec("analyze account_rollups, account_source_rollups");
  const [
    accounts,
    links,
    rollupRows,
    brandRows,
    accountRows,
    accountSourceRows,
    deviceRows,
    subIdRows,
    clicks,
    conversions,
  ] = await Promise.all([
    count(db, "select count(*)::int as n from accounts where tenant_id = $1", [dataset.tenantId]),
    count(db, "select count(*)::int as n from links where tenant_id = $1", [dataset.tenantId]),
    count(db, "select count(*)::int as n from daily_rollups"),
    count(db, "select count(*)::int as n from brand_rollups"),
    count(db, "select count(*)::int as n from account_rollups"),
    count(db, "select count(*)::int as n from account_source_rollups"),
    count(db, "select count(*)::int as n from device_rollups"),
    count(db, "select count(*)::int as n from sub_id_a_rollups"),
    count(db, "select coalesce(sum(clicks), 0)::bigint as n from daily_rollups where tenant_id = $1", [
      dataset.tenantId,
    ]),
    count(db, "select count(*)::int as n from conversions where tenant_id = $1", [dataset.tenantId]),
  ]);
  report.emit({
    figure: "dataset",
    db: kind,
    status: dataset.status,
    ...(database.schema === undefined ? {} : { schema: database.schema }),
    ...spec,
    trafficEnd: dataset.now.toISOString(),
    storedClicks: clicks,
    storedConversions: conversions,
    storedAccounts: accounts,
    storedLinks: links,
    rollupRows,
    // The coarser rollups the reports read (migration 0007); the account ones hold blocks of days too.
    coarseRollupRows: {
      brand: brandRows,
      account: accountRows,
      accountSource: accountSourceRows,
      device: deviceRows,
      subIdA: subIdRows,
    },
    generation: dataset.generation,
  });

  const timing = { warmup: o.warmup, requests: o.requests };
  report.progress(`${kind}: timing count-rollups (${o.warmup} warm-up, ${o.requests} timed)`);
  const baseline = await measureSequential(async () => {
    await db.query("select count(*) from daily_rollups");
  }, timing);
  report.emit({ figure: "count-rollups", db: kind, ...baseline, rollupRows });

  const { app } = await buildApp({
    config: loadConfig({ LOG_LEVEL: "silent", SEED_DEMO: "false" }),
    db,
    jwtSecret: randomBytes(32).toString("hex"),
    logger: false,
    rateLimit: { max: 10_000_000 },
  });
  try {
    await app.listen({ host: "127.0.0.1", port: 0 });
    const key = await createApiToken(
      db,
      dataset.tenantId,
      { name: `Bench key ${randomBytes(4).toString("hex")}`, scopes: ["reports.read"] },
      SYSTEM,
      new Date(),
    );
    const headers = { authorization: `ApiKey ${key.token}` };
    // Daily USD rates over the whole dataset (the demo's, as the tenant's own), for the -in-EUR figures.
    await seedDemoRates(db, dataset.tenantId, dataset.now);
    // Each shape's own p50, by figure: the variants' ratios are over it.
    const own = new Map<string, number>();
    const timed: (Shape & { same?: string; ratio?: string })[] = shapes(dataset.now)
      .filter((shape) => o.figures === undefined || o.figures.includes(shape.figure))
      .flatMap((shape) => [shape, ...variants(shape)]);
    for (const shape of timed) {
      const url = `${baseUrl(app)}/api/v1${shape.path}?${new URLSearchParams(shape.query)}`;
      let total = 0;
      const call = async () => {
        const res = await fetch(url, { headers });
        const body = (await res.json()) as { pagination?: { total?: number } };
        if (res.status !== 200) throw new Error(`${shape.figure}: ${res.status} ${JSON.stringify(body)}`);
        total = body.pagination?.total ?? 0;
      };
      report.progress(`${kind}: timing ${shape.figure} (${o.warmup} warm-up, ${o.requests} timed)`);
      const latency: Latency = await measureSequential(call, timing);
      report.emit({
        figure: shape.figure,
        db: kind,
        ...latency,
        baselineP50Ms: baseline.p50Ms,
        ratio: round(latency.p50Ms / baseline.p50Ms, 3),
        goal: `p50 <= ${shape.goalMs ?? GOAL_P50_MS} ms`,
        goalMet: latency.p50Ms <= (shape.goalMs ?? GOAL_P50_MS),
        totalRows: total,
        ...(shape.same !== undefined && shape.ratio !== undefined
          ? { [shape.ratio]: round(latency.p50Ms / (own.get(shape.same) ?? latency.p50Ms), 3) }
          : {}),
        request: `GET /api/v1${shape.path}?${decodeURIComponent(new URLSearchParams(shape.query).toString())}`,
      });
      if (shape.same === undefined) own.set(shape.figure, latency.p50Ms);
      if (o.explain === "all" || (o.explain === "missed" && latency.p50Ms > (shape.goalMs ?? GOAL_P50_MS))) {
        const plan = await explain(db, dataset.tenantId, shape, new Date());
        report.progress(`${kind}: ${shape.figure} plan:\n${plan}`);
      }
    }
  } finally {
    await app.close();
  }
}

export async function run(): Promise<void> {
  const s: Settings = settings();
  const o = options();
  report.progress(
    `pglite ${JSON.stringify(o.spec.pglite)}, postgres ${JSON.stringify(o.spec.postgres)}; ` +
      `${o.warmup} warm-up + ${o.requests} timed requests per figure`,
  );
  await forEachDatabase(s, report, (kind, database) => benchDatabase(kind, database, o), { postgresSchema: o.schema });
  report.progress("done");
}
