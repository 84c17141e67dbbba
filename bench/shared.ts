import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import autocannon from "autocannon";
import type { FastifyInstance } from "fastify";
import pg from "pg";
import { createApiToken } from "../src/features/api-tokens/index.js";
import { createTenant, createUser } from "../src/features/tenants/index.js";
import { type Db, migrate } from "../src/platform/db/index.js";
import { openPglite } from "../src/platform/db/pglite.js";
import { openPostgres } from "../src/platform/db/postgres.js";

/**
 * What the benchmarks share: their settings from the environment, their output (figures as JSON
 * lines on stdout, progress on stderr), the load generator and the databases they run on.
 *
 * Settings: BENCH_DURATION_S (default 10) per measured figure, BENCH_WARMUP_S (default 1.5) of
 * warm-up before it, BENCH_CONNECTIONS (default 50), BENCH_WORKERS load worker threads (default 1;
 * 0 = on the main thread, sharing the server's event loop), BENCH_DATABASE_URL (default the local
 * PostgreSQL; skipped when unreachable), BENCH_DATABASES (default "pglite,postgres": which of them to
 * run on).
 */

const DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test";

export interface Settings {
  durationS: number;
  warmupS: number;
  connections: number;
  workers: number;
  postgresUrl: string;
  databases: Db["kind"][];
}

function positiveNumber(name: string, fallback: number, { allowZero = false } = {}): number {
  const raw = process.env[name]?.trim();
  if (raw === undefined || raw === "") return fallback;
  const value = Number(raw);
  if (!Number.isFinite(value) || value < 0 || (value === 0 && !allowZero)) {
    throw new Error(`${name} must be a ${allowZero ? "non-negative" : "positive"} number, got '${raw}'`);
  }
  return value;
}

export function settings(): Settings {
  return {
    durationS: positiveNumber("BENCH_DURATION_S", 10),
    warmupS: positiveNumber("BENCH_WARMUP_S", 1.5, { allowZero: true }),
    connections: Math.round(positiveNumber("BENCH_CONNECTIONS", 50)),
    workers: Math.round(positiveNumber("BENCH_WORKERS", 1, { allowZero: true })),
    postgresUrl: process.env.BENCH_DATABASE_URL?.trim() || DEFAULT_POSTGRES_URL,
    databases: databaseKinds(process.env.BENCH_DATABASES),
  };
}

function databaseKinds(raw: string | undefined): Db["kind"][] {
  if (raw === undefined || raw.trim() === "") return ["pglite", "postgres"];
  const kinds = raw.split(",").map((k) => k.trim().toLowerCase());
  const known: Db["kind"][] = ["pglite", "postgres"];
  const unknown = kinds.filter((k) => !known.some((kind) => kind === k));
  if (unknown.length > 0 || kinds.length === 0) {
    throw new Error(`BENCH_DATABASES must list pglite and/or postgres, got '${raw}'`);
  }
  return known.filter((kind) => kinds.includes(kind));
}

/** A positive integer from the environment, or the fallback when unset. */
export function intSetting(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const value = Number(raw);
  if (!Number.isInteger(value) || value <= 0) throw new Error(`${name} must be a positive integer, got '${raw}'`);
  return value;
}

/** Comma-separated positive integers from the environment, or the fallback when unset. */
export function intListSetting(name: string, fallback: number[]): number[] {
  const raw = process.env[name]?.trim();
  if (!raw) return fallback;
  const values = raw.split(",").map((v) => Number(v.trim()));
  if (values.some((v) => !Number.isInteger(v) || v <= 0)) {
    throw new Error(`${name} must list positive integers, got '${raw}'`);
  }
  return values;
}

export interface Reporter {
  /** A progress line on stderr. */
  progress(message: string): void;
  /** A figure: one JSON line on stdout, tagged with the benchmark's name. */
  emit(line: Record<string, unknown>): void;
}

export function reporter(bench: string): Reporter {
  return {
    progress(message) {
      process.stderr.write(`[${bench}] ${message}\n`);
    },
    emit(line) {
      process.stdout.write(`${JSON.stringify({ bench, ...line })}\n`);
    },
  };
}

/** The settings as a progress line. */
export function describe(s: Settings): string {
  return (
    `duration ${s.durationS}s, warm-up ${s.warmupS}s, ${s.connections} connections, ` +
    `${s.workers === 0 ? "load on the main thread" : `${s.workers} load worker thread(s)`}`
  );
}

export function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((e: unknown) => errorMessage(e)).join("; ");
  }
  return error instanceof Error ? error.message || error.name : String(error);
}

export function baseUrl(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo | null;
  if (address === null || typeof address === "string") throw new Error("server is not listening on TCP");
  return `http://127.0.0.1:${address.port}`;
}

export interface Target {
  url: string;
  headers?: Record<string, string>;
  /** The status every answer must have; any 2xx when absent. */
  status?: number;
}

export interface Measurement {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Answers in the measured run (all of them with the expected status). */
  requests: number;
}

export interface Measured {
  measurement: Measurement;
  /** Answers with the expected status over the probe, the warm-up and the measured run. */
  answered: number;
  /**
   * Requests sent but never answered: those in flight when a timed run ended and the load
   * generator dropped its connections. The server may or may not have handled them.
   */
  unanswered: number;
}

function cannon(target: Target, durationS: number, s: Settings): Promise<autocannon.Result> {
  return autocannon({
    url: target.url,
    headers: target.headers ?? {},
    connections: s.connections,
    duration: durationS,
    ...(s.workers > 0 ? { workers: s.workers } : {}),
  });
}

function isExpected(target: Target, status: number): boolean {
  return target.status === undefined ? status >= 200 && status < 300 : status === target.status;
}

/** Answers with the expected status; every answer must have it and every request be answered, or the run aborts. */
function requireAllOk(figure: string, target: Target, result: autocannon.Result): number {
  const stats = Object.entries(result.statusCodeStats ?? {}).map(([code, stat]) => ({
    code: Number(code),
    count: stat.count ?? 0,
  }));
  const ok = stats.filter((stat) => isExpected(target, stat.code)).reduce((sum, stat) => sum + stat.count, 0);
  const other = stats.filter((stat) => !isExpected(target, stat.code)).reduce((sum, stat) => sum + stat.count, 0);
  const bad = other + result.errors + result.timeouts;
  if (bad === 0 && ok > 0) return ok;
  const codes = stats.map((stat) => `${stat.code}: ${stat.count}`).join(", ");
  const expected = target.status === undefined ? "2xx" : String(target.status);
  throw new Error(
    `${figure}: ${ok} ${expected}, ${other} other, ${result.errors} errors, ` +
      `${result.timeouts} timeouts (status codes ${codes || "none"}); every measured response must be ${expected}`,
  );
}

/** Requests the run sent that were never answered (cut off when its time ran out). */
function unansweredOf(result: autocannon.Result, answered: number): number {
  return Math.max(0, result.requests.sent - answered);
}

/** One probe request, a warm-up run, then the measured run against the target. */
export async function measure(figure: string, target: Target, s: Settings, r: Reporter): Promise<Measured> {
  // One request first, so a wrong setup fails with the server's own answer rather than a count.
  const probe = await fetch(target.url, { headers: target.headers ?? {}, redirect: "manual" });
  if (!isExpected(target, probe.status)) {
    throw new Error(`${figure}: probe answered ${probe.status}: ${await probe.text()}`);
  }
  await probe.arrayBuffer();
  let answered = 1;
  let unanswered = 0;
  if (s.warmupS > 0) {
    r.progress(`${figure}: warming up ${s.warmupS}s`);
    const warmup = await cannon(target, s.warmupS, s);
    const ok = requireAllOk(`${figure} (warm-up)`, target, warmup);
    answered += ok;
    unanswered += unansweredOf(warmup, ok);
  }
  r.progress(`${figure}: measuring ${s.durationS}s with ${s.connections} connections`);
  const result = await cannon(target, s.durationS, s);
  const ok = requireAllOk(figure, target, result);
  answered += ok;
  unanswered += unansweredOf(result, ok);
  return {
    measurement: {
      reqPerSec: round(result.requests.average, 1),
      p50Ms: result.latency.p50,
      p99Ms: result.latency.p99,
      requests: ok,
    },
    answered,
    unanswered,
  };
}

export interface Latency {
  p50Ms: number;
  p95Ms: number;
  meanMs: number;
  minMs: number;
  maxMs: number;
  /** Timed calls. */
  requests: number;
}

/** The nearest-rank percentile of sorted values. */
function percentile(sorted: readonly number[], p: number): number {
  if (sorted.length === 0) return Number.NaN;
  const rank = Math.min(sorted.length, Math.max(1, Math.ceil((p / 100) * sorted.length)));
  return sorted[rank - 1] as number;
}

/**
 * Latency of one call at a time: `warmup` untimed calls, then `requests` timed ones, one after
 * the other (for figures whose cost is one request's work, not the server's throughput).
 */
export async function measureSequential(
  call: () => Promise<void>,
  { warmup, requests }: { warmup: number; requests: number },
): Promise<Latency> {
  for (let i = 0; i < warmup; i++) await call();
  const times: number[] = [];
  for (let i = 0; i < requests; i++) {
    const started = performance.now();
    await call();
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  return {
    p50Ms: round(percentile(times, 50)),
    p95Ms: round(percentile(times, 95)),
    meanMs: round(times.reduce((sum, t) => sum + t, 0) / Math.max(1, times.length)),
    minMs: round(times[0] ?? Number.NaN),
    maxMs: round(times[times.length - 1] ?? Number.NaN),
    requests: times.length,
  };
}

export interface Database {
  db: Db;
  /** The PostgreSQL schema the database lives in (absent on PGlite). */
  schema?: string;
  dispose(): Promise<void>;
}

async function openBenchPglite(): Promise<Database> {
  const db = await openPglite();
  await migrate(db);
  return { db, dispose: () => db.close() };
}

/**
 * A fresh schema on PostgreSQL, dropped afterwards; or, given `keep`, that named schema, created
 * when missing and kept with its data for the next run. `skipped` with the reason when the server
 * cannot be reached (any later failure throws).
 */
async function openBenchPostgres(url: string, keep?: string): Promise<Database | { skipped: string }> {
  if (keep !== undefined && !/^[a-z_][a-z0-9_]*$/.test(keep)) throw new Error(`bad schema name '${keep}'`);
  const schema = keep ?? `bench_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => undefined);
    return { skipped: errorMessage(error) };
  }
  try {
    await admin.query(`create schema ${keep === undefined ? "" : "if not exists "}${schema}`);
  } finally {
    await admin.end();
  }
  const db = openPostgres({ connectionString: url, schema, max: 10 });
  const dropSchema = async () => {
    if (keep !== undefined) return;
    const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
    await client.connect();
    try {
      await client.query(`drop schema if exists ${schema} cascade`);
    } finally {
      await client.end();
    }
  };
  try {
    await migrate(db);
  } catch (error) {
    await db.close();
    await dropSchema();
    throw error;
  }
  return {
    db,
    schema,
    async dispose() {
      await db.close();
      await dropSchema();
    },
  };
}

/**
 * Runs the benchmark on PGlite (in memory), then on PostgreSQL when it can be reached (a
 * `skipped` figure otherwise), each on a fresh database disposed of afterwards; only on those
 * BENCH_DATABASES lists. With `postgresSchema`, PostgreSQL runs in that schema, created when
 * missing and kept afterwards (for data too costly to make on every run).
 */
export async function forEachDatabase(
  s: Settings,
  r: Reporter,
  bench: (kind: Db["kind"], database: Database) => Promise<void>,
  { postgresSchema }: { postgresSchema?: string } = {},
): Promise<void> {
  if (s.databases.includes("pglite")) {
    r.progress("pglite: opening an in-memory database and migrating");
    const lite = await openBenchPglite();
    try {
      await bench("pglite", lite);
    } finally {
      await lite.dispose();
    }
  }
  if (!s.databases.includes("postgres")) return;

  r.progress(`postgres: connecting to ${s.postgresUrl.replace(/\/\/[^@/]*@/, "//***@")}`);
  const postgres = await openBenchPostgres(s.postgresUrl, postgresSchema);
  if ("skipped" in postgres) {
    r.progress(`postgres: skipped (${postgres.skipped})`);
    r.emit({ figure: "all", db: "postgres", skipped: true, reason: postgres.skipped });
    return;
  }
  try {
    await bench("postgres", postgres);
  } finally {
    await postgres.dispose();
  }
}

/** Who the benchmarks' own changes are made by, in the audit log. */
export const BENCH_ACTOR = { type: "system", name: "bench" } as const;

export interface BenchTenant {
  tenantId: string;
  /** The admin person, who also made the key. */
  user: { id: string; name: string };
  email: string;
  password: string;
  /** The Authorization header value of the tenant's API key. */
  apiKey: string;
}

/** One tenant with an admin person and one API key, made straight in the database. */
export async function seedBenchTenant(
  db: Db,
  tenant: { name: string; webhookAllowance?: number | null },
  now = new Date(),
): Promise<BenchTenant> {
  const created = await createTenant(db, tenant, BENCH_ACTOR, now);
  const email = `bench-${randomBytes(4).toString("hex")}@example.com`;
  const password = "bench correct horse battery";
  const user = await createUser(
    db,
    created.id,
    { email, password, name: "Bench admin", permissions: ["account.admin"] },
    BENCH_ACTOR,
    now,
  );
  const key = await createApiToken(
    db,
    created.id,
    { name: "Bench key" },
    { type: "user", id: user.id, name: user.name },
    now,
  );
  return {
    tenantId: created.id,
    user: { id: user.id, name: user.name },
    email,
    password,
    apiKey: `ApiKey ${key.token}`,
  };
}
