import { randomBytes } from "node:crypto";
import type { AddressInfo } from "node:net";
import autocannon from "autocannon";
import Fastify, { type FastifyInstance } from "fastify";
import pg from "pg";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createApiToken } from "../../src/features/api-tokens/index.js";
import { createTenant, createUser } from "../../src/features/tenants/index.js";
import { type Db, migrate } from "../../src/platform/db/index.js";
import { openPglite } from "../../src/platform/db/pglite.js";
import { openPostgres } from "../../src/platform/db/postgres.js";

/**
 * API baseline: how much of a bare Fastify route's throughput survives our stack (conventions,
 * metrics, auth hook, rate limit, envelope serialisation) on an authenticated request.
 *
 * Figures, each measured for BENCH_DURATION_S (default 10) with BENCH_CONNECTIONS (default 50)
 * after a short warm-up, per database (PGlite in memory; PostgreSQL when reachable):
 *   bare           GET /bare on a one-route Fastify app: the baseline, measured right before each
 *                  of the figures below, which are reported as a ratio of it
 *   me-bearer      GET /api/v1/me with a JWT (verifies the JWT, one DB query per request)
 *   apikey-scopes  GET /api/v1/api-tokens/scopes with an API key (no DB once the key cache is warm)
 * The load generator runs in BENCH_WORKERS worker threads (default 1; 0 = on the main thread,
 * sharing the server's event loop).
 */

const BENCH = "api-baseline";
const GOAL_RATIO = 0.5;
const DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test";
const SYSTEM = { type: "system", name: "bench" } as const;

interface Settings {
  durationS: number;
  warmupS: number;
  connections: number;
  workers: number;
  postgresUrl: string;
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

function settings(): Settings {
  return {
    durationS: positiveNumber("BENCH_DURATION_S", 10),
    warmupS: positiveNumber("BENCH_WARMUP_S", 1.5, { allowZero: true }),
    connections: Math.round(positiveNumber("BENCH_CONNECTIONS", 50)),
    workers: Math.round(positiveNumber("BENCH_WORKERS", 1, { allowZero: true })),
    postgresUrl: process.env.BENCH_DATABASE_URL?.trim() || DEFAULT_POSTGRES_URL,
  };
}

function progress(message: string): void {
  process.stderr.write(`[${BENCH}] ${message}\n`);
}

function emit(line: Record<string, unknown>): void {
  process.stdout.write(`${JSON.stringify({ bench: BENCH, ...line })}\n`);
}

function round(value: number, digits = 2): number {
  const factor = 10 ** digits;
  return Math.round(value * factor) / factor;
}

function errorMessage(error: unknown): string {
  if (error instanceof AggregateError && error.errors.length > 0) {
    return error.errors.map((e: unknown) => errorMessage(e)).join("; ");
  }
  return error instanceof Error ? error.message || error.name : String(error);
}

function baseUrl(app: FastifyInstance): string {
  const address = app.server.address() as AddressInfo | null;
  if (address === null || typeof address === "string") throw new Error("server is not listening on TCP");
  return `http://127.0.0.1:${address.port}`;
}

interface Target {
  url: string;
  headers?: Record<string, string>;
}

interface Measurement {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
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

/** Every response must be a 2xx and every request answered; anything else aborts the run. */
function requireAllOk(figure: string, result: autocannon.Result): void {
  const bad = result.non2xx + result.errors + result.timeouts;
  if (bad === 0 && result["2xx"] > 0) return;
  const codes = Object.entries(result.statusCodeStats ?? {})
    .map(([code, stat]) => `${code}: ${stat.count ?? 0}`)
    .join(", ");
  throw new Error(
    `${figure}: ${result["2xx"]} 2xx, ${result.non2xx} non-2xx, ${result.errors} errors, ` +
      `${result.timeouts} timeouts (status codes ${codes || "none"}); every measured response must be 2xx`,
  );
}

async function measure(figure: string, target: Target, s: Settings): Promise<Measurement> {
  // One request first, so a wrong setup fails with the server's own answer rather than a count.
  const probe = await fetch(target.url, { headers: target.headers ?? {} });
  if (!probe.ok) throw new Error(`${figure}: probe answered ${probe.status}: ${await probe.text()}`);
  if (s.warmupS > 0) {
    progress(`${figure}: warming up ${s.warmupS}s`);
    requireAllOk(`${figure} (warm-up)`, await cannon(target, s.warmupS, s));
  }
  progress(`${figure}: measuring ${s.durationS}s with ${s.connections} connections`);
  const result = await cannon(target, s.durationS, s);
  requireAllOk(figure, result);
  return {
    reqPerSec: round(result.requests.average, 1),
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
    requests: result["2xx"],
  };
}

async function startBare(): Promise<FastifyInstance> {
  const bare = Fastify({ logger: false });
  bare.get("/bare", async () => ({ code: "ok", message: "OK", data: { bare: true } }));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  return bare;
}

interface Database {
  db: Db;
  dispose(): Promise<void>;
}

async function openBenchPglite(): Promise<Database> {
  const db = await openPglite();
  await migrate(db);
  return { db, dispose: () => db.close() };
}

/**
 * A fresh schema on PostgreSQL, dropped afterwards; `skipped` with the reason when the server
 * cannot be reached (any later failure throws).
 */
async function openBenchPostgres(url: string): Promise<Database | { skipped: string }> {
  const schema = `bench_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => undefined);
    return { skipped: errorMessage(error) };
  }
  try {
    await admin.query(`create schema ${schema}`);
  } finally {
    await admin.end();
  }
  const db = openPostgres({ connectionString: url, schema, max: 10 });
  const dropSchema = async () => {
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
    async dispose() {
      await db.close();
      await dropSchema();
    },
  };
}

interface Credentials {
  bearer: string;
  apiKey: string;
}

/** One tenant, an admin person signed in over HTTP, and one API key. */
async function seed(db: Db, url: string): Promise<Credentials> {
  const now = new Date();
  const tenant = await createTenant(db, { name: "Bench tenant" }, SYSTEM, now);
  const email = `bench-${randomBytes(4).toString("hex")}@example.com`;
  const password = "bench correct horse battery";
  const user = await createUser(
    db,
    tenant.id,
    { email, password, name: "Bench admin", permissions: ["account.admin"] },
    SYSTEM,
    now,
  );
  const login = await fetch(`${url}/api/v1/auth`, {
    method: "POST",
    headers: { "content-type": "application/json" },
    body: JSON.stringify({ email, password }),
  });
  const body: unknown = await login.json();
  const token =
    typeof body === "object" &&
    body !== null &&
    "data" in body &&
    typeof body.data === "object" &&
    body.data !== null &&
    "token" in body.data &&
    typeof body.data.token === "string"
      ? body.data.token
      : undefined;
  if (!login.ok || token === undefined) throw new Error(`login failed (${login.status}): ${JSON.stringify(body)}`);
  const key = await createApiToken(
    db,
    tenant.id,
    { name: "Bench key" },
    { type: "user", id: user.id, name: user.name },
    now,
  );
  return { bearer: `Bearer ${token}`, apiKey: `ApiKey ${key.token}` };
}

async function benchDatabase(kind: Db["kind"], database: Database, bareUrl: string, s: Settings): Promise<void> {
  const options = {
    config: loadConfig({ LOG_LEVEL: "silent", SEED_DEMO: "false" }),
    db: database.db,
    jwtSecret: randomBytes(32).toString("hex"),
    logger: false,
    rateLimit: { max: 10_000_000 },
  } as const;
  const { app } = await buildApp(options);
  // The same app with usage metering off, to show what metering costs.
  const { app: unmetered } = await buildApp({ ...options, metering: false });
  try {
    await app.listen({ host: "127.0.0.1", port: 0 });
    await unmetered.listen({ host: "127.0.0.1", port: 0 });
    const url = baseUrl(app);
    const credentials = await seed(database.db, url);

    const figures: { figure: string; target: Target }[] = [
      { figure: "me-bearer", target: { url: `${url}/api/v1/me`, headers: { authorization: credentials.bearer } } },
      {
        figure: "apikey-scopes",
        target: { url: `${url}/api/v1/api-tokens/scopes`, headers: { authorization: credentials.apiKey } },
      },
      {
        figure: "apikey-scopes-unmetered",
        target: {
          url: `${baseUrl(unmetered)}/api/v1/api-tokens/scopes`,
          headers: { authorization: credentials.apiKey },
        },
      },
    ];
    for (const { figure, target } of figures) {
      // The baseline right before each figure: on a shared machine the load drifts within minutes.
      const baseline = await measure(`${kind} bare (for ${figure})`, { url: bareUrl }, s);
      emit({
        figure: "bare",
        db: kind,
        pairedWith: figure,
        ...baseline,
        connections: s.connections,
        durationS: s.durationS,
      });
      const m = await measure(`${kind} ${figure}`, target, s);
      emit({
        figure,
        db: kind,
        ...m,
        baselineReqPerSec: baseline.reqPerSec,
        ratio: round(m.reqPerSec / baseline.reqPerSec, 3),
        goal: `>= ${GOAL_RATIO} of bare route`,
        connections: s.connections,
        durationS: s.durationS,
      });
    }
  } finally {
    await app.close();
    await unmetered.close();
  }
}

export async function run(): Promise<void> {
  const s = settings();
  progress(
    `duration ${s.durationS}s, warm-up ${s.warmupS}s, ${s.connections} connections, ` +
      `${s.workers === 0 ? "load on the main thread" : `${s.workers} load worker thread(s)`}`,
  );
  const bare = await startBare();
  try {
    const bareUrl = `${baseUrl(bare)}/bare`;

    progress("pglite: opening an in-memory database and migrating");
    const lite = await openBenchPglite();
    try {
      await benchDatabase("pglite", lite, bareUrl, s);
    } finally {
      await lite.dispose();
    }

    progress(`postgres: connecting to ${s.postgresUrl.replace(/\/\/[^@/]*@/, "//***@")}`);
    const postgres = await openBenchPostgres(s.postgresUrl);
    if ("skipped" in postgres) {
      progress(`postgres: skipped (${postgres.skipped})`);
      emit({ figure: "all", db: "postgres", skipped: true, reason: postgres.skipped });
    } else {
      try {
        await benchDatabase("postgres", postgres, bareUrl, s);
      } finally {
        await postgres.dispose();
      }
    }
  } finally {
    await bare.close();
  }
  progress("done");
}
