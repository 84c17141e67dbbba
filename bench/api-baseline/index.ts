import { randomBytes } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createApiToken } from "../../src/features/api-tokens/index.js";
import { createTenant, createUser } from "../../src/features/tenants/index.js";
import type { Db } from "../../src/platform/db/index.js";
import {
  baseUrl,
  type Database,
  describe,
  forEachDatabase,
  measure,
  reporter,
  round,
  type Settings,
  settings,
  type Target,
} from "../shared.js";

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
const SYSTEM = { type: "system", name: "bench" } as const;
const report = reporter(BENCH);

async function startBare(): Promise<FastifyInstance> {
  const bare = Fastify({ logger: false });
  bare.get("/bare", async () => ({ code: "ok", message: "OK", data: { bare: true } }));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  return bare;
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
      const { measurement: baseline } = await measure(`${kind} bare (for ${figure})`, { url: bareUrl }, s, report);
      report.emit({
        figure: "bare",
        db: kind,
        pairedWith: figure,
        ...baseline,
        connections: s.connections,
        durationS: s.durationS,
      });
      const { measurement: m } = await measure(`${kind} ${figure}`, target, s, report);
      report.emit({
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
  report.progress(describe(s));
  const bare = await startBare();
  try {
    const bareUrl = `${baseUrl(bare)}/bare`;
    await forEachDatabase(s, report, (kind, database) => benchDatabase(kind, database, bareUrl, s));
  } finally {
    await bare.close();
  }
  report.progress("done");
}
