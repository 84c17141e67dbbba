import { type ChildProcess, fork } from "node:child_process";
import { fileURLToPath } from "node:url";
import { Agent, request } from "undici";
import { webhookFanOut } from "../../src/features/outgoing-webhooks/index.js";
import { createWebhook } from "../../src/features/outgoing-webhooks/settings-service.js";
import { createTenant } from "../../src/features/tenants/index.js";
import type { ValidConversion } from "../../src/features/tracking/conversion-input.js";
import { recordConversions } from "../../src/features/tracking/index.js";
import type { Db } from "../../src/platform/db/index.js";
import {
  type Database,
  forEachDatabase,
  intListSetting,
  intSetting,
  measureSequential,
  reporter,
  round,
  settings,
} from "../shared.js";
import { E2E_GOALS, endToEnd } from "../steady-delivery.js";
import { BenchReceiver } from "./receiver.js";

/**
 * Outgoing webhooks on PostgreSQL with a loopback receiver (worker processes share only the
 * database, so PGlite is not measured).
 *
 * Figures:
 *   bare-sender     BENCH_WEBHOOK_EVENTS (default 20,000) GETs to the receiver through undici, 64 in
 *                   flight on kept-alive connections, no database: the baseline in deliveries/s
 *   throughput-1w   the same number of delivery events, written by the conversion service for a
 *                   suspended webhook (so they wait Paused), released at once by enabling it; one
 *                   worker process delivers them: deliveries/s, and the ratio to bare-sender
 *   throughput-2w   the same with two worker processes
 *   latency         one worker process; conversions recorded one per transaction at a steady
 *                   BENCH_WEBHOOK_RATE per second (default 200) for BENCH_DURATION_S (default 10,
 *                   after BENCH_WARMUP_S): from the commit of the conversion's transaction to the
 *                   receiver's first request, p50/p99 (recordingP50Ms: how long recording took);
 *                   the ratio is p50 over a bare GET round trip's p50
 *   steady-100, steady-300, batches
 *                   end to end through the service as `npm start` runs it, one process with every
 *                   role: single conversions posted at 100/s and 300/s on one link, and batches of
 *                   500 (bench/steady-delivery.ts); BENCH_E2E_RATES (default "100,300") and
 *                   BENCH_E2E_BATCH_TOTAL (default 5,000) size them
 * BENCH_WEBHOOK_FIGURES=worker runs only the figures of the worker processes, =e2e only the
 * end-to-end ones (default both).
 * Every event must end Delivered after one attempt and reach the receiver, or the run fails.
 * Goals: >= 2,000 deliveries/s on one worker process; latency p50 <= 50 ms; end to end at 100/s,
 * from answer to receiver p50 <= 50 ms and p99 <= 250 ms; >= 2,000 deliveries/s from batches.
 */

const BENCH = "webhooks";
const report = reporter(BENCH);
const SYSTEM = { type: "system", name: "bench" } as const;
const GOAL_RATE = 2000;
const GOAL_P50_MS = 50;
const WORKER_SCRIPT = fileURLToPath(new URL("./worker-process.ts", import.meta.url));
const HOOKS = { conversions: [webhookFanOut], statusChanges: [] };

function conversion(n: number): ValidConversion {
  return {
    type: "Deposit",
    clickId: null,
    value: "10.00",
    currency: "EUR",
    eventName: "Deposit",
    externalId: `bench-${n}`,
    occurredAt: new Date(),
    status: null,
  };
}

async function setUp(db: Db, receiver: string, status: "Enabled" | "Suspended") {
  const now = new Date();
  const tenant = await createTenant(db, { name: `Bench ${status}`, webhookAllowance: null }, SYSTEM, now);
  const webhook = await createWebhook(
    db,
    { name: "Bench receiver", url: `${receiver}/hook?c=\${conversionId}&v=\${eventValue}`, method: "GET" },
    { tenantId: tenant.id, actor: SYSTEM, at: now, clickWebhooks: false },
  );
  if (status === "Suspended") {
    await db.query("update outgoing_webhooks set status = 'Suspended' where id = $1", [webhook.id]);
  }
  return { tenantId: tenant.id, webhookId: webhook.id };
}

/** Starts worker processes on the bench schema and waits until each is listening. */
async function startWorkers(count: number, url: string, schema: string): Promise<ChildProcess[]> {
  return Promise.all(
    Array.from(
      { length: count },
      () =>
        new Promise<ChildProcess>((resolve, reject) => {
          const child = fork(WORKER_SCRIPT, [], {
            execArgv: ["--import", "tsx"],
            env: { ...process.env, BENCH_WORKER_DATABASE_URL: url, BENCH_WORKER_SCHEMA: schema },
            stdio: ["ignore", "inherit", "inherit", "ipc"],
          });
          child.once("message", () => resolve(child));
          child.once("exit", (code) => reject(new Error(`worker process exited with ${code} before it was ready`)));
        }),
    ),
  );
}

async function stopWorkers(children: ChildProcess[]): Promise<void> {
  await Promise.all(
    children.map(
      (child) =>
        new Promise<void>((resolve) => {
          if (child.exitCode !== null) return resolve();
          child.once("exit", () => resolve());
          child.send("stop");
        }),
    ),
  );
}

/** Fails the run unless every event of the tenant was delivered once and reached the receiver. */
async function verify(db: Db, tenantId: string, expected: number, received: number): Promise<void> {
  const [row] = await db.query<{ delivered: number; single: number }>(
    `select count(*) filter (where status = 'Delivered')::int as delivered,
            count(*) filter (where status = 'Delivered' and attempts = 1)::int as single
       from webhook_events where tenant_id = $1`,
    [tenantId],
  );
  if (row?.delivered !== expected || row.single !== expected || received < expected) {
    throw new Error(
      `expected ${expected} events delivered once; got ${row?.delivered} delivered, ${row?.single} after one attempt, ${received} received`,
    );
  }
}

async function bareSender(base: string, events: number): Promise<number> {
  const agent = new Agent({ connections: 64 });
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < events) {
        next += 1;
        const answer = await request(`${base}/bare?c=b${next}`, { dispatcher: agent });
        await answer.body.text();
      }
    }),
  );
  const seconds = (performance.now() - started) / 1000;
  await agent.close();
  return events / seconds;
}

async function throughput(
  database: Database,
  url: string,
  receiver: BenchReceiver,
  base: string,
  events: number,
  workers: number,
  bareRate: number,
): Promise<number> {
  const { db, schema } = database;
  if (schema === undefined) throw new Error("throughput needs PostgreSQL");
  const { tenantId, webhookId } = await setUp(db, base, "Suspended");
  report.progress(`throughput-${workers}w: recording ${events} conversions (their events wait Paused)`);
  for (let done = 0; done < events; done += 500) {
    const items = Array.from({ length: Math.min(500, events - done) }, (_, i) => conversion(done + i + workers * 1e7));
    await db.transaction((tx) => recordConversions(tx, tenantId, items, new Date(), { hooks: HOOKS }));
    report.progress(`throughput-${workers}w: ${Math.min(events, done + 500)}/${events} events written`);
  }
  const children = await startWorkers(workers, url, schema);
  const before = receiver.requests;
  report.progress(`throughput-${workers}w: ${workers} worker process(es) ready; releasing the events`);
  const started = performance.now();
  await db.transaction(async (tx) => {
    await tx.query("update outgoing_webhooks set status = 'Enabled' where id = $1", [webhookId]);
    await tx.query("update webhook_events set status = 'Queued', next_attempt_at = now() where webhook_id = $1", [
      webhookId,
    ]);
    await tx.query("select pg_notify('webhook_events', $1)", [tenantId]);
  });
  let delivered = 0;
  let lastReport = started;
  while (delivered < events) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    const [row] = await db.query<{ n: number }>(
      "select count(*)::int as n from webhook_events where webhook_id = $1 and status = 'Delivered'",
      [webhookId],
    );
    delivered = row?.n ?? 0;
    if (performance.now() - lastReport > 2000) {
      lastReport = performance.now();
      report.progress(`throughput-${workers}w: ${delivered}/${events} delivered`);
    }
    if (performance.now() - started > 600_000) throw new Error(`throughput-${workers}w: not done after 10 minutes`);
  }
  const seconds = (performance.now() - started) / 1000;
  await stopWorkers(children);
  await verify(db, tenantId, events, receiver.requests - before);
  const rate = events / seconds;
  report.emit({
    figure: `throughput-${workers}w`,
    db: "postgres",
    workers,
    events,
    seconds: round(seconds),
    deliveriesPerSec: round(rate, 1),
    ratio: round(rate / bareRate),
    ...(workers === 1 ? { goalDeliveriesPerSec: GOAL_RATE, meetsGoal: rate >= GOAL_RATE } : {}),
  });
  return rate;
}

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

async function latency(database: Database, url: string, receiver: BenchReceiver, base: string): Promise<void> {
  const s = settings();
  const rate = intSetting("BENCH_WEBHOOK_RATE", 200);
  const { db, schema } = database;
  if (schema === undefined) throw new Error("latency needs PostgreSQL");
  const { tenantId } = await setUp(db, base, "Enabled");
  const children = await startWorkers(1, url, schema);
  const bare = await measureSequential(
    async () => {
      const answer = await request(`${base}/bare-latency`);
      await answer.body.text();
    },
    { warmup: 50, requests: 500 },
  );
  const total = Math.round((s.warmupS + s.durationS) * rate);
  const warm = Math.round(s.warmupS * rate);
  report.progress(`latency: recording ${total} conversions at ${rate}/s (first ${warm} are warm-up)`);
  const startedAt = new Map<string, number>();
  const recording: number[] = [];
  const began = performance.now();
  const inFlight: Promise<void>[] = [];
  for (let n = 0; n < total; n++) {
    const due = began + (n * 1000) / rate;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const t0 = performance.timeOrigin + performance.now();
    inFlight.push(
      db
        .transaction((tx) => recordConversions(tx, tenantId, [conversion(2e7 + n)], new Date(), { hooks: HOOKS }))
        .then(([recorded]) => {
          if (recorded && n >= warm) {
            const committed = performance.timeOrigin + performance.now();
            startedAt.set(recorded.conversion.id, committed);
            recording.push(committed - t0);
          }
        }),
    );
  }
  await Promise.all(inFlight);
  const deadline = performance.now() + 60_000;
  while ([...startedAt.keys()].some((id) => !receiver.firstSeen.has(id)) && performance.now() < deadline) {
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  await stopWorkers(children);
  const times = [...startedAt].map(([id, t0]) => (receiver.firstSeen.get(id) ?? Number.NaN) - t0);
  const missing = times.filter((t) => Number.isNaN(t)).length;
  if (missing > 0) throw new Error(`latency: ${missing} conversions never reached the receiver`);
  times.sort((a, b) => a - b);
  recording.sort((a, b) => a - b);
  const p50 = percentile(times, 50);
  report.emit({
    figure: "latency",
    db: "postgres",
    conversionsPerSec: rate,
    measured: times.length,
    p50Ms: round(p50),
    p99Ms: round(percentile(times, 99)),
    maxMs: round(times[times.length - 1] ?? Number.NaN),
    recordingP50Ms: round(percentile(recording, 50)),
    bareRoundTripP50Ms: bare.p50Ms,
    ratio: round(p50 / bare.p50Ms),
    goalP50Ms: GOAL_P50_MS,
    meetsGoal: p50 <= GOAL_P50_MS,
  });
}

/** The end-to-end shapes, with the goals of the delivery (answer to receiver, and from batches). */
async function endToEndFigures(): Promise<void> {
  const s = settings();
  await endToEnd(
    report,
    {
      rates: intListSetting("BENCH_E2E_RATES", [100, 300]),
      batchTotal: intSetting("BENCH_E2E_BATCH_TOTAL", 5000),
      warmupS: s.warmupS,
      durationS: s.durationS,
    },
    (figures) => {
      const delivery = figures.delivery as { p50Ms: number; p99Ms: number } | undefined;
      const goals =
        figures.figure === "batches"
          ? {
              goalDeliveriesPerSec: E2E_GOALS.batchDeliveriesPerSec,
              meetsGoal: (figures.deliveriesPerSec as number) >= E2E_GOALS.batchDeliveriesPerSec,
            }
          : figures.conversionsPerSec === 100 && delivery !== undefined
            ? {
                goal: `delivery p50 <= ${E2E_GOALS.deliveryP50Ms} ms, p99 <= ${E2E_GOALS.deliveryP99Ms} ms`,
                meetsGoal: delivery.p50Ms <= E2E_GOALS.deliveryP50Ms && delivery.p99Ms <= E2E_GOALS.deliveryP99Ms,
              }
            : {};
      report.emit({ ...figures, ...goals });
    },
  );
}

export async function run(): Promise<void> {
  const s = settings();
  const figures = process.env.BENCH_WEBHOOK_FIGURES?.trim() || "all";
  if (!["all", "worker", "e2e"].includes(figures)) {
    throw new Error(`BENCH_WEBHOOK_FIGURES must be worker or e2e, got '${figures}'`);
  }
  const events = intSetting("BENCH_WEBHOOK_EVENTS", 20_000);
  if (!s.databases.includes("postgres")) {
    report.progress("skipped: worker processes share a database, which needs PostgreSQL");
    report.emit({ figure: "all", db: "pglite", skipped: true, reason: "needs PostgreSQL" });
    return;
  }
  if (figures !== "e2e") {
    const receiver = new BenchReceiver();
    const base = await receiver.start();
    try {
      await forEachDatabase({ ...s, databases: ["postgres"] }, report, async (_kind, database) => {
        report.progress(`bare-sender: ${events} GETs, 64 in flight`);
        const bareRate = await bareSender(base, events);
        report.emit({ figure: "bare-sender", db: "none", events, deliveriesPerSec: round(bareRate, 1) });
        await throughput(database, s.postgresUrl, receiver, base, events, 1, bareRate);
        await throughput(database, s.postgresUrl, receiver, base, events, 2, bareRate);
        await latency(database, s.postgresUrl, receiver, base);
      });
    } finally {
      await receiver.stop();
    }
  }
  if (figures !== "worker") await endToEndFigures();
}
