import { randomBytes } from "node:crypto";
import Fastify, { type FastifyInstance } from "fastify";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";

import { type Db, migrate } from "../../src/platform/db/index.js";
import { openPglite } from "../../src/platform/db/pglite.js";
import { openPostgres } from "../../src/platform/db/postgres.js";
import { seedBenchTenant } from "../shared.js";
import type { Catalog, FromParent, ToParent } from "./protocol.js";
import { explainClickBatch, factsCost, recordWithoutRoute } from "./stages.js";

/**
 * The service under load, in a process of its own (as in production), so that its CPU time is
 * its own and not the load generator's. BENCH_CLICK_ROLE=bare: a one-route Fastify app answering
 * the click URL with a fixed 302 (the baseline). BENCH_CLICK_ROLE=app: the real app on
 * BENCH_CLICK_DB (an in-memory PGlite, or BENCH_CLICK_DATABASE_URL in BENCH_CLICK_SCHEMA, its
 * connections named BENCH_CLICK_APP_NAME so the parent can find their backends), seeded with one
 * link and one traffic source through the API. Driven by the parent's messages (protocol.ts).
 */

const BRAND_URL = "https://brand.example/landing?cid={clickId}";
const BARE_LOCATION = "https://brand.example/landing?cid=bare";

function send(message: ToParent): void {
  process.send?.(message);
}

function cpu(): { userUs: number; systemUs: number } {
  const { user, system } = process.cpuUsage();
  return { userUs: user, systemUs: system };
}

function address(app: FastifyInstance): string {
  const info = app.server.address();
  if (info === null || typeof info === "string") throw new Error("not listening on TCP");
  return `http://127.0.0.1:${info.port}`;
}

/** Creates one catalog row through the API and returns its id (throws with the answer otherwise). */
async function createVia(url: string, apiKey: string, path: string, payload: Record<string, unknown>): Promise<number> {
  const res = await fetch(`${url}/api/v1/${path}`, {
    method: "POST",
    headers: { authorization: apiKey, "content-type": "application/json" },
    body: JSON.stringify(payload),
  });
  const body = (await res.json()) as { data?: { id?: unknown } };
  const id = body.data?.id;
  if (res.status !== 201 || typeof id !== "number") {
    throw new Error(`POST /api/v1/${path} answered ${res.status}: ${JSON.stringify(body)}`);
  }
  return id;
}

/** One tenant with an API key, and through the API a brand link and a traffic source. */
async function seed(db: Db, url: string): Promise<Catalog> {
  const now = new Date();
  const { tenantId, apiKey } = await seedBenchTenant(db, { name: "Bench tenant" }, now);
  const brandId = await createVia(url, apiKey, "brands", { name: "Brand" });
  const programId = await createVia(url, apiKey, "programs", { name: "Program", brandIds: [brandId] });
  const accountId = await createVia(url, apiKey, "accounts", { name: "Account", programId, username: "aff1" });
  const linkId = await createVia(url, apiKey, "links", { name: "Link", accountId, brandId, url: BRAND_URL });
  const trafficSourceId = await createVia(url, apiKey, "traffic-sources", { name: "Source" });
  return { tenantId, linkId, brandId, programId, accountId, trafficSourceId };
}

async function storedClicks(db: Db, tenantId: string): Promise<{ stored: number; rolledUp: number }> {
  const [clicks] = await db.query<{ n: number }>("select count(*)::int as n from clicks where tenant_id = $1", [
    tenantId,
  ]);
  const [rollups] = await db.query<{ n: number }>(
    // Bots' clicks are stored too, counted apart (bot_clicks).
    "select coalesce(sum(clicks + bot_clicks), 0)::int as n from daily_rollups where tenant_id = $1",
    [tenantId],
  );
  return { stored: clicks?.n ?? 0, rolledUp: rollups?.n ?? 0 };
}

async function openDb(): Promise<Db> {
  if (process.env.BENCH_CLICK_DB === "postgres") {
    const url = new URL(process.env.BENCH_CLICK_DATABASE_URL ?? "");
    url.searchParams.set("application_name", process.env.BENCH_CLICK_APP_NAME ?? "bench_click");
    const schema = process.env.BENCH_CLICK_SCHEMA;
    if (schema === undefined) throw new Error("BENCH_CLICK_SCHEMA is required on PostgreSQL");
    return openPostgres({ connectionString: url.toString(), schema, max: 10 });
  }
  const db = await openPglite();
  await migrate(db);
  return db;
}

async function runBare(): Promise<void> {
  const bare = Fastify({ logger: false });
  bare.get("/go/:brandLinkId/:trafficSourceId", (_request, reply) => reply.redirect(BARE_LOCATION, 302));
  await bare.listen({ host: "127.0.0.1", port: 0 });
  process.on("message", (message: FromParent) => {
    if (message.type === "cpu") send({ type: "cpu", ...cpu(), written: 0 });
    else if (message.type === "stop") void bare.close().then(() => process.exit(0));
  });
  send({ type: "ready", url: address(bare) });
}

async function runApp(): Promise<void> {
  const db = await openDb();
  const { app, ctx } = await buildApp({
    // Every request comes from this machine's one address: the per-address click limit is raised
    // out of reach, so that its check runs on every click and every click is still recorded.
    config: loadConfig({ LOG_LEVEL: "silent", SEED_DEMO: "false", CLICK_RATE_PER_IP_PER_MINUTE: "1000000000" }),
    db,
    jwtSecret: randomBytes(32).toString("hex"),
    logger: false,
    rateLimit: { max: 10_000_000 },
  });
  await app.listen({ host: "127.0.0.1", port: 0 });
  const url = address(app);
  const catalog = await seed(db, url);
  const clicks = ctx.tracking.clicks;
  const handle = async (message: FromParent): Promise<void> => {
    switch (message.type) {
      case "cpu":
        send({ type: "cpu", ...cpu(), written: clicks.written });
        return;
      case "flush":
        await clicks.flush();
        send({ type: "flushed", written: clicks.written });
        return;
      case "record":
        send({ type: "recorded", ...(await recordWithoutRoute(db, clicks, catalog, message.clicks)) });
        return;
      case "facts":
        send({ type: "facts", ...factsCost(message.lookups) });
        return;
      case "explain":
        send({ type: "explained", ...(await explainClickBatch(db, catalog, message.clicks)) });
        return;
      case "stop": {
        // Graceful: the click buffer is written before close resolves.
        await app.close();
        const { stored, rolledUp } = await storedClicks(db, catalog.tenantId);
        send({ type: "stopped", stored, rolledUp, written: clicks.written, dropped: clicks.dropped });
        await db.close();
        process.exit(0);
      }
    }
  };
  process.on("message", (message: FromParent) => {
    handle(message).catch((error: unknown) => {
      send({ type: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    });
  });
  send({ type: "ready", url, catalog });
}

(process.env.BENCH_CLICK_ROLE === "bare" ? runBare() : runApp()).catch((error: unknown) => {
  send({ type: "failed", message: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  process.exit(1);
});
