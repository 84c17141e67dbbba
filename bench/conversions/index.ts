import { randomBytes } from "node:crypto";
import { buildApp } from "../../src/app.js";
import { loadConfig } from "../../src/config.js";
import { createWebhook } from "../../src/features/outgoing-webhooks/settings-service.js";

import type { Db } from "../../src/platform/db/index.js";
import { openPostgres } from "../../src/platform/db/postgres.js";
import { Backends, costSince, markCost, perThousand, withApplicationName } from "../api-baseline/cost.js";
import {
  BENCH_ACTOR,
  baseUrl,
  type Database,
  describe,
  forEachDatabase,
  intListSetting,
  intSetting,
  measureSequential,
  reporter,
  round,
  type Settings,
  seedBenchTenant,
  settings,
} from "../shared.js";
import { E2E_GOALS, endToEnd } from "../steady-delivery.js";

/**
 * Conversion intake through `POST /api/v1/conversions` with an API key, on PGlite and PostgreSQL,
 * for a tenant with one webhook that matches every conversion (so each one writes a delivery
 * event in its transaction; no worker delivers them here):
 *   batch     batches of BENCH_CONVERSION_BATCH (default 500), BENCH_CONVERSION_IN_FLIGHT (default
 *             2) at a time, for BENCH_DURATION_S after BENCH_WARMUP_S: conversions/s, p50 per batch,
 *             and the CPU per 1,000 conversions of the service (serviceCpuMsPer1k: this process,
 *             PGlite included, the bench's own requests too) and of its PostgreSQL backends
 *             (databaseCpuMsPer1k, from /proc). Half the conversions carry a click id of a real
 *             click (attributed, with its snapshot), half none.
 *   single    one conversion per request, one request at a time: p50/p95 latency
 *   checked   the service's tables against what it answered: every conversion answered as
 *             recorded stored once with one delivery event, and a batch sent again answered as
 *             duplicates item by item with nothing new written (non-zero exit otherwise)
 *   steady-100, steady-300
 *             PostgreSQL only, end to end through the service as `npm start` runs it (one process,
 *             every role, a webhook to a loopback receiver): single conversions of one click (one
 *             link, one rollup row) posted at a steady 100/s and 300/s (BENCH_E2E_RATES), each
 *             answer's latency and its delivery's (bench/steady-delivery.ts)
 * Goals: >= 3,000 conversions/s in batches of 500; a single conversion p50 <= 10 ms, one at a time
 * and at a steady 100/s on one link.
 */

const BENCH = "conversions";
const report = reporter(BENCH);
const GOAL_PER_SEC = 3000;
const GOAL_SINGLE_P50_MS = 10;
const CLICKS = 1000;
const BROWSER = "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36";

interface Seeded {
  apiKey: string;
  tenantId: string;
  clickIds: string[];
}

/** What the bench reads of an answer: a created row's id, or a batch's counts and items. */
interface AnswerData {
  id?: number;
  created?: number;
  items?: { duplicate: boolean; externalId: string | null }[];
}

async function post(
  url: string,
  apiKey: string,
  path: string,
  body: unknown,
): Promise<{ status: number; data: AnswerData }> {
  const answer = await fetch(`${url}${path}`, {
    method: "POST",
    headers: { authorization: apiKey, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const parsed = (await answer.json()) as { data: AnswerData | null };
  return { status: answer.status, data: parsed.data ?? {} };
}

/** A tenant with an API key, a catalog, CLICKS real clicks written, and one webhook matching every conversion. */
async function seed(db: Db, url: string, flushClicks: () => Promise<void>): Promise<Seeded> {
  const now = new Date();
  const { tenantId, apiKey } = await seedBenchTenant(db, { name: "Bench conversions", webhookAllowance: null }, now);
  const create = async (path: string, body: Record<string, unknown>): Promise<number> => {
    const answer = await post(url, apiKey, `/api/v1/${path}`, body);
    if (answer.status !== 201)
      throw new Error(`POST ${path} answered ${answer.status}: ${JSON.stringify(answer.data)}`);
    if (answer.data.id === undefined) throw new Error(`POST ${path} answered no id`);
    return answer.data.id;
  };
  const brandId = await create("brands", { name: "Bench brand" });
  const programId = await create("programs", { name: "Bench program", brandIds: [brandId] });
  const accountId = await create("accounts", { name: "Bench account", programId, username: "bench" });
  const linkId = await create("links", {
    name: "Bench link",
    accountId,
    brandId,
    url: "https://brand.example/landing?cid={clickId}",
  });
  const sourceId = await create("traffic-sources", { name: "Bench source" });
  const clickIds: string[] = [];
  for (let i = 0; i < CLICKS; i++) {
    const answer = await fetch(`${url}/go/${linkId}/${sourceId}?gclid=bench${i}`, {
      headers: { "user-agent": BROWSER },
      redirect: "manual",
    });
    const clickId = new URL(answer.headers.get("location") ?? "http://x/").searchParams.get("cid");
    if (answer.status !== 302 || clickId === null) throw new Error(`click answered ${answer.status}`);
    clickIds.push(clickId);
  }
  await flushClicks();
  await createWebhook(
    db,
    { name: "Bench webhook", url: `http://127.0.0.1:9/hook?c=\${conversionId}&v=\${eventValue}`, method: "GET" },
    { tenantId, actor: BENCH_ACTOR, at: now, clickWebhooks: false },
  );
  return { apiKey, tenantId, clickIds };
}

function batchOf(seeded: Seeded, first: number, size: number): Record<string, unknown>[] {
  return Array.from({ length: size }, (_, i) => {
    const n = first + i;
    return {
      type: n % 3 === 0 ? "Signup" : "Deposit",
      ...(n % 2 === 0 ? { clickId: seeded.clickIds[n % seeded.clickIds.length] } : {}),
      value: n % 3 === 0 ? undefined : 10 + (n % 50),
      currency: "EUR",
      externalId: `bench-${n}`,
    };
  });
}

async function counts(db: Db, tenantId: string): Promise<{ conversions: number; events: number }> {
  const [row] = await db.query<{ conversions: number; events: number }>(
    `select (select count(*)::int from conversions where tenant_id = $1) as conversions,
            (select count(*)::int from webhook_events where tenant_id = $1) as events`,
    [tenantId],
  );
  return { conversions: row?.conversions ?? 0, events: row?.events ?? 0 };
}

async function benchDatabase(kind: Db["kind"], database: Database, s: Settings): Promise<void> {
  const batchSize = intSetting("BENCH_CONVERSION_BATCH", 500);
  const inFlight = intSetting("BENCH_CONVERSION_IN_FLIGHT", 2);
  // On PostgreSQL the service's pool names its connections, so that its backends' CPU can be read.
  const applicationName = `bench_conv_${randomBytes(4).toString("hex")}`;
  const db =
    kind === "postgres" && database.schema !== undefined
      ? openPostgres({ connectionString: withApplicationName(s.postgresUrl, applicationName), schema: database.schema })
      : database.db;
  const meter = kind === "postgres" ? await Backends.open(s.postgresUrl) : undefined;
  const backends = meter === undefined ? undefined : { meter, applicationName };
  const { app, ctx } = await buildApp({
    // Its clicks all come from this machine: past the per-address rate they would not be recorded.
    config: loadConfig({ LOG_LEVEL: "silent", SEED_DEMO: "false", CLICK_RATE_PER_IP_PER_MINUTE: "1000000000" }),
    db,
    jwtSecret: randomBytes(32).toString("hex"),
    logger: false,
    rateLimit: { max: 10_000_000 },
  });
  try {
    await app.listen({ host: "127.0.0.1", port: 0 });
    const url = baseUrl(app);
    report.progress(`${kind}: seeding a catalog, ${CLICKS} clicks and a webhook`);
    const seeded = await seed(db, url, () => ctx.tracking.clicks.flush().then(() => undefined));
    let next = 0;
    let recorded = 0;
    const batchTimes: number[] = [];
    const sendBatch = async (): Promise<void> => {
      const items = batchOf(seeded, next, batchSize);
      next += batchSize;
      const started = performance.now();
      const answer = await post(url, seeded.apiKey, "/api/v1/conversions", { items });
      batchTimes.push(performance.now() - started);
      if (answer.status !== 201 || answer.data.created !== batchSize) {
        throw new Error(`a batch answered ${answer.status}: ${JSON.stringify(answer.data).slice(0, 300)}`);
      }
      recorded += batchSize;
    };
    const runFor = async (seconds: number): Promise<void> => {
      const until = performance.now() + seconds * 1000;
      await Promise.all(
        Array.from({ length: inFlight }, async () => {
          while (performance.now() < until) await sendBatch();
        }),
      );
    };

    report.progress(`${kind} batch: warming up ${s.warmupS}s`);
    await runFor(s.warmupS);
    const warmRecorded = recorded;
    batchTimes.length = 0;
    report.progress(`${kind} batch: measuring ${s.durationS}s, batches of ${batchSize}, ${inFlight} in flight`);
    const mark = await markCost(backends);
    const started = performance.now();
    await runFor(s.durationS);
    const seconds = (performance.now() - started) / 1000;
    const cost = await costSince(mark, backends);
    const measured = recorded - warmRecorded;
    const perSec = measured / seconds;
    batchTimes.sort((a, b) => a - b);
    report.emit({
      figure: "batch",
      db: kind,
      batchSize,
      inFlight,
      conversions: measured,
      seconds: round(seconds),
      conversionsPerSec: round(perSec, 1),
      batchP50Ms: round(batchTimes[Math.floor(batchTimes.length / 2)] ?? Number.NaN),
      serviceCpuMsPer1k: perThousand(cost.serviceMs, measured),
      databaseCpuMsPer1k: perThousand(cost.databaseMs, measured),
      goal: `>= ${GOAL_PER_SEC} conversions/s`,
      meetsGoal: perSec >= GOAL_PER_SEC,
    });

    let single = 0;
    const latency = await measureSequential(
      async () => {
        single += 1;
        const [item] = batchOf(seeded, 1e8 + single, 1);
        const answer = await post(url, seeded.apiKey, "/api/v1/conversions", item);
        if (answer.status !== 201) throw new Error(`a single conversion answered ${answer.status}`);
        recorded += 1;
      },
      { warmup: 20, requests: 200 },
    );
    report.emit({
      figure: "single",
      db: kind,
      ...latency,
      goal: `p50 <= ${GOAL_SINGLE_P50_MS} ms`,
      meetsGoal: latency.p50Ms <= GOAL_SINGLE_P50_MS,
    });

    // Everything answered as recorded is stored once with its event; a repeat writes nothing.
    const before = await counts(db, seeded.tenantId);
    const again = await post(url, seeded.apiKey, "/api/v1/conversions", { items: batchOf(seeded, 0, batchSize) });
    const after = await counts(db, seeded.tenantId);
    const everyItemDuplicate =
      Array.isArray(again.data.items) &&
      again.data.items.length === batchSize &&
      again.data.items.every((item, i) => item.duplicate && item.externalId === `bench-${i}`);
    const ok =
      before.conversions === recorded &&
      before.events === recorded &&
      again.status === 200 &&
      again.data.created === 0 &&
      everyItemDuplicate &&
      after.conversions === before.conversions &&
      after.events === before.events;
    report.emit({
      figure: "checked",
      db: kind,
      answeredRecorded: recorded,
      stored: before.conversions,
      deliveryEvents: before.events,
      repeatBatchStatus: again.status,
      repeatBatchCreated: again.data.created,
      everyItemDuplicate,
      storedAfterRepeat: after.conversions,
      ok,
    });
    if (!ok) process.exitCode = 1;
  } finally {
    await app.close();
    await meter?.close();
    if (db !== database.db) await db.close();
  }
}

export async function run(): Promise<void> {
  const s = settings();
  report.progress(describe(s));
  await forEachDatabase(s, report, (kind, database) => benchDatabase(kind, database, s));
  if (s.databases.includes("postgres")) {
    const rates = intListSetting("BENCH_E2E_RATES", [100, 300]);
    await endToEnd(report, { rates, batchTotal: 0, warmupS: s.warmupS, durationS: s.durationS }, (figures) => {
      const answer = figures.answer as { p50Ms: number };
      report.emit({
        ...figures,
        ...(figures.conversionsPerSec === 100
          ? { goal: `answer p50 <= ${E2E_GOALS.answerP50Ms} ms`, meetsGoal: answer.p50Ms <= E2E_GOALS.answerP50Ms }
          : {}),
      });
    });
  }
  report.progress("done");
}
