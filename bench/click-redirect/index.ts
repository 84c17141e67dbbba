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
 * Click redirect: how much of a bare Fastify redirect's throughput survives our stack on the
 * hottest path of the product, and whether every click it answered is stored exactly once.
 *
 * Figures, each measured for BENCH_DURATION_S (default 10) with BENCH_CONNECTIONS (default 50)
 * after a short warm-up, per database (PGlite in memory; PostgreSQL when reachable):
 *   bare            GET /go/{linkId}/{sourceId}?gclid=abc&tracker=benchtracker on a one-route Fastify
 *                   app answering 302 to a fixed Location: the baseline, measured right before
 *   click-redirect  the same request (browser user agent) on the real app: a counted click, 302 to
 *                   the brand link's url; reported as a ratio of the bare route
 *   clicks-stored   after a graceful close (which flushes the click buffer): the clicks table holds
 *                   one row per 302 the load generator got (probe, warm-up and measured run).
 *                   A timed run ends by dropping its connections with requests in flight; the route
 *                   may have counted those too, so up to `unanswered` rows more than `expected` are
 *                   allowed. Fewer rows (lost), more than that (stored twice), a daily rollup that
 *                   disagrees, or a buffer that wrote or dropped a different number exits non-zero.
 * The load generator runs in BENCH_WORKERS worker threads (default 1; 0 = on the main thread,
 * sharing the server's event loop).
 */

const BENCH = "click-redirect";
const GOAL_RATIO = 0.6;
const SYSTEM = { type: "system", name: "bench" } as const;
const BRAND_URL = "https://brand.example/landing?cid={clickId}";
const BARE_LOCATION = "https://brand.example/landing?cid=bare";
const QUERY = "gclid=abc&tracker=benchtracker";
const BROWSER = {
  "user-agent":
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
  "accept-language": "en-US,en;q=0.9",
};
const report = reporter(BENCH);

/** One route answering every click URL with a 302 to a fixed Location: no stack, no click. */
async function startBare(): Promise<FastifyInstance> {
  const bare = Fastify({ logger: false });
  bare.get("/go/:brandLinkId/:trafficSourceId", (_request, reply) => reply.redirect(BARE_LOCATION, 302));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  return bare;
}

interface Catalog {
  tenantId: string;
  linkId: number;
  trafficSourceId: number;
}

/** Creates one catalog row through the API and returns its id (throws with the answer otherwise). */
async function createVia(url: string, apiKey: string, path: string, payload: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${url}/api/v1/${path}`, {
    method: "POST",
    headers: { authorization: apiKey, "content-type": "application/json" },
    body: JSON.stringify(payload),
  });
  const body: unknown = await res.json();
  const id =
    typeof body === "object" &&
    body !== null &&
    "data" in body &&
    typeof body.data === "object" &&
    body.data !== null &&
    "id" in body.data &&
    typeof body.data.id === "number"
      ? body.data.id
      : undefined;
  if (res.status !== 201 || id === undefined) {
    throw new Error(`POST /api/v1/${path} answered ${res.status}: ${JSON.stringify(body)}`);
  }
  return id;
}

/** One tenant with an API key, and through the API a brand link and a traffic source. */
async function seed(db: Db, url: string): Promise<Catalog> {
  const now = new Date();
  const tenant = await createTenant(db, { name: "Bench tenant" }, SYSTEM, now);
  const user = await createUser(
    db,
    tenant.id,
    {
      email: `bench-${randomBytes(4).toString("hex")}@example.com`,
      password: "bench correct horse battery",
      name: "Bench admin",
      permissions: ["account.admin"],
    },
    SYSTEM,
    now,
  );
  const key = await createApiToken(
    db,
    tenant.id,
    { name: "Bench key" },
    { type: "user", id: user.id, name: user.name },
    now,
  );
  const apiKey = `ApiKey ${key.token}`;
  const brandId = await createVia(url, apiKey, "brands", { name: "Brand" });
  const programId = await createVia(url, apiKey, "programs", { name: "Program", brandIds: [brandId] });
  const accountId = await createVia(url, apiKey, "accounts", { name: "Account", programId, username: "aff1" });
  const linkId = await createVia(url, apiKey, "links", { name: "Link", accountId, brandId, url: BRAND_URL });
  const trafficSourceId = await createVia(url, apiKey, "traffic-sources", { name: "Source" });
  return { tenantId: tenant.id, linkId, trafficSourceId };
}

async function storedClicks(db: Db, tenantId: string): Promise<{ stored: number; rolledUp: number }> {
  const [clicks] = await db.query<{ n: number }>("select count(*)::int as n from clicks where tenant_id = $1", [
    tenantId,
  ]);
  const [rollups] = await db.query<{ n: number }>(
    "select coalesce(sum(clicks), 0)::int as n from daily_rollups where tenant_id = $1",
    [tenantId],
  );
  return { stored: clicks?.n ?? 0, rolledUp: rollups?.n ?? 0 };
}

async function benchDatabase(kind: Db["kind"], database: Database, bare: string, s: Settings): Promise<void> {
  const { app, ctx } = await buildApp({
    config: loadConfig({ LOG_LEVEL: "silent", SEED_DEMO: "false" }),
    db: database.db,
    jwtSecret: randomBytes(32).toString("hex"),
    logger: false,
    rateLimit: { max: 10_000_000 },
  });
  let catalog: Catalog;
  let answered: number;
  let unanswered: number;
  try {
    await app.listen({ host: "127.0.0.1", port: 0 });
    catalog = await seed(database.db, baseUrl(app));
    const path = `/go/${catalog.linkId}/${catalog.trafficSourceId}?${QUERY}`;
    const bareTarget: Target = { url: `${bare}${path}`, headers: BROWSER, status: 302 };
    const clickTarget: Target = { url: `${baseUrl(app)}${path}`, headers: BROWSER, status: 302 };

    const { measurement: baseline } = await measure(`${kind} bare (for ${BENCH})`, bareTarget, s, report);
    report.emit({
      figure: "bare",
      db: kind,
      pairedWith: BENCH,
      ...baseline,
      connections: s.connections,
      durationS: s.durationS,
    });
    const click = await measure(`${kind} ${BENCH}`, clickTarget, s, report);
    report.emit({
      figure: BENCH,
      db: kind,
      ...click.measurement,
      baselineReqPerSec: baseline.reqPerSec,
      ratio: round(click.measurement.reqPerSec / baseline.reqPerSec, 3),
      goal: `>= ${GOAL_RATIO} of bare route`,
      connections: s.connections,
      durationS: s.durationS,
    });
    answered = click.answered;
    unanswered = click.unanswered;
  } finally {
    // Graceful: the click buffer is written before close resolves.
    await app.close();
  }

  const { stored, rolledUp } = await storedClicks(database.db, catalog.tenantId);
  const expected = answered;
  const lost = Math.max(0, expected - stored);
  const extra = Math.max(0, stored - expected);
  const buffer = { written: ctx.tracking.clicks.written, dropped: ctx.tracking.clicks.dropped };
  const problems = [
    ...(lost > 0 ? [`${lost} answered click(s) not stored`] : []),
    ...(extra > unanswered ? [`${extra - unanswered} click(s) more than were requested (stored twice?)`] : []),
    ...(rolledUp !== stored ? [`daily rollups count ${rolledUp} clicks, the table holds ${stored}`] : []),
    ...(buffer.written !== stored ? [`the click buffer wrote ${buffer.written}, the table holds ${stored}`] : []),
    ...(buffer.dropped > 0 ? [`the click buffer dropped ${buffer.dropped}`] : []),
  ];
  report.emit({
    figure: "clicks-stored",
    db: kind,
    expected,
    stored,
    lost,
    unanswered,
    extra,
    rolledUp,
    bufferWritten: buffer.written,
    bufferDropped: buffer.dropped,
    ok: problems.length === 0,
  });
  if (problems.length > 0) {
    report.progress(`${kind} clicks-stored: ${problems.join("; ")}`);
    process.exitCode = 1;
  }
}

export async function run(): Promise<void> {
  const s = settings();
  report.progress(describe(s));
  const bare = await startBare();
  try {
    const bareUrl = baseUrl(bare);
    await forEachDatabase(s, report, (kind, database) => benchDatabase(kind, database, bareUrl, s));
  } finally {
    await bare.close();
  }
  report.progress("done");
}
