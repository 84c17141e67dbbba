import { randomBytes } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createApiToken } from "../../src/features/api-tokens/index.js";
import type { Db } from "../../src/platform/db/index.js";
import { openPostgres } from "../../src/platform/db/postgres.js";
import {
  baseUrl,
  type Database,
  describe,
  forEachDatabase,
  reporter,
  round,
  type Settings,
  seedBenchTenant,
  settings,
} from "../shared.js";
import { Backends, withApplicationName } from "./cost.js";
import { measureCost } from "./load.js";

/**
 * API baseline: how much of a bare Fastify route's throughput survives our stack (conventions,
 * metrics, auth hook, rate limit, envelope serialisation) on an authenticated request.
 *
 * Figures, each measured for BENCH_DURATION_S (default 10) with BENCH_CONNECTIONS (default 50)
 * after a short warm-up, per database (PGlite in memory; PostgreSQL when reachable):
 *   bare           GET /bare on a one-route Fastify app: the baseline, measured right before each
 *                  of the figures below, which are reported as a ratio of it
 *   me-bearer      GET /api/v1/me with a JWT (what every dashboard call pays: the JWT and the
 *                  person, both cached once seen)
 *   apikey-scopes  GET /api/v1/api-tokens/scopes with an API key (no DB once the key cache is warm)
 *   apikey-list    GET /api/v1/api-tokens?limit=50 with an API key: a 50-row list (count and page
 *                  queries, the envelope's serialisation), against `bare-list`, a bare Fastify
 *                  route answering the very same JSON (about 14 KB)
 * Each figure also gives the CPU it cost per 1,000 requests: serviceCpuMsPer1k (this process:
 * the service, and PGlite when it is the database) and databaseCpuMsPer1k (the service's
 * PostgreSQL backends, from /proc). The load generator runs in a child process, with
 * BENCH_WORKERS worker threads (default 1; 0 = on its main thread). BENCH_API_FIGURES (a comma
 * list of the names above) runs only those. BENCH_CPU_PROFILE (a directory) writes a CPU profile
 * of each measured run there (profile.ts).
 */

const BENCH = "api-baseline";
const GOALS: Record<string, number> = {
  "me-bearer": 0.5,
  "apikey-scopes": 0.5,
  "apikey-scopes-unmetered": 0.5,
  "apikey-list": 0.3,
};
const LIST_ROWS = 50;
const report = reporter(BENCH);

/** The bare baselines; `/bare-list` answers whatever list body the run set last. */
async function startBare(): Promise<{ bare: FastifyInstance; setList(body: unknown): void }> {
  const bare = Fastify({ logger: false });
  let list: unknown = null;
  bare.get("/bare", async () => ({ code: "ok", message: "OK", data: { bare: true } }));
  bare.get("/bare-list", async () => list);
  await bare.listen({ host: "127.0.0.1", port: 0 });
  return {
    bare,
    setList(body) {
      list = body;
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
  const { tenantId, user, email, password, apiKey } = await seedBenchTenant(db, { name: "Bench tenant" }, now);
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
  // The list figure's rows: a page of keys as a tenant would hold them (with scopes, some used).
  for (let i = 1; i < LIST_ROWS; i++) {
    await createApiToken(
      db,
      tenantId,
      { name: `Bench list key ${String(i).padStart(2, "0")}`, scopes: i % 2 === 0 ? ["reports.read"] : [] },
      { type: "user", id: user.id, name: user.name },
      now,
    );
  }
  return { bearer: `Bearer ${token}`, apiKey };
}

interface Figure {
  figure: string;
  url: string;
  authorization: string;
  /** The bare route it is a ratio of. */
  bare: string;
}

async function benchDatabase(
  kind: Db["kind"],
  database: Database,
  bare: { url: string; setList(body: unknown): void },
  s: Settings,
): Promise<void> {
  // On PostgreSQL the service gets a pool of its own on the bench schema, its connections named
  // so that the CPU of their backends can be told apart from anything else the server runs.
  const applicationName = `bench_api_${randomBytes(4).toString("hex")}`;
  const db =
    kind === "postgres" && database.schema !== undefined
      ? openPostgres({ connectionString: withApplicationName(s.postgresUrl, applicationName), schema: database.schema })
      : database.db;
  const meter = kind === "postgres" ? await Backends.open(s.postgresUrl) : undefined;
  const backends = meter === undefined ? undefined : { meter, applicationName };
  const options = {
    config: loadConfig({ LOG_LEVEL: "silent", SEED_DEMO: "false" }),
    db,
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
    const credentials = await seed(db, url);
    const listUrl = `${url}/api/v1/api-tokens?limit=${LIST_ROWS}`;
    const listed = await fetch(listUrl, { headers: { authorization: credentials.apiKey } });
    const listBody = await listed.text();
    if (!listed.ok) throw new Error(`list answered ${listed.status}: ${listBody}`);
    bare.setList(JSON.parse(listBody));
    report.progress(`${kind}: the list answers ${listBody.length} bytes`);

    const figures: Figure[] = [
      { figure: "me-bearer", url: `${url}/api/v1/me`, authorization: credentials.bearer, bare: "/bare" },
      {
        figure: "apikey-scopes",
        url: `${url}/api/v1/api-tokens/scopes`,
        authorization: credentials.apiKey,
        bare: "/bare",
      },
      {
        figure: "apikey-scopes-unmetered",
        url: `${baseUrl(unmetered)}/api/v1/api-tokens/scopes`,
        authorization: credentials.apiKey,
        bare: "/bare",
      },
      { figure: "apikey-list", url: listUrl, authorization: credentials.apiKey, bare: "/bare-list" },
    ];
    const only = process.env.BENCH_API_FIGURES?.split(",").map((name) => name.trim());
    for (const figure of figures.filter((f) => only === undefined || only.includes(f.figure))) {
      // The baseline right before each figure: on a shared machine the load drifts within minutes.
      const bareFigure = figure.bare === "/bare" ? "bare" : "bare-list";
      const baseline = await measureCost(
        `${kind} ${bareFigure} (for ${figure.figure})`,
        { url: `${bare.url}${figure.bare}` },
        s,
        report,
      );
      report.emit({
        figure: bareFigure,
        db: kind,
        pairedWith: figure.figure,
        ...baseline,
        databaseCpuMsPer1k: undefined,
        connections: s.connections,
        durationS: s.durationS,
      });
      const m = await measureCost(
        `${kind} ${figure.figure}`,
        { url: figure.url, headers: { authorization: figure.authorization } },
        s,
        report,
        backends,
      );
      report.emit({
        figure: figure.figure,
        db: kind,
        ...m,
        baselineReqPerSec: baseline.reqPerSec,
        ratio: round(m.reqPerSec / baseline.reqPerSec, 3),
        baselineCpuMsPer1k: baseline.serviceCpuMsPer1k,
        goal: `>= ${GOALS[figure.figure]} of bare route`,
        connections: s.connections,
        durationS: s.durationS,
      });
    }
  } finally {
    await app.close();
    await unmetered.close();
    await meter?.close();
    if (db !== database.db) await db.close();
  }
}

export async function run(): Promise<void> {
  const s = settings();
  report.progress(describe(s));
  const bare = await startBare();
  try {
    const bareUrl = baseUrl(bare.bare);
    await forEachDatabase(s, report, (kind, database) =>
      benchDatabase(kind, database, { url: bareUrl, setList: bare.setList }, s),
    );
  } finally {
    await bare.bare.close();
  }
  report.progress("done");
}
