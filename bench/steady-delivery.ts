import { randomBytes } from "node:crypto";
import { Agent, request } from "undici";
import { ensureServerBuilt } from "../scripts/build-server.js";
import { openPostgres } from "../src/platform/db/postgres.js";
import { type Started, startService, stopService, withPostgresDatabase } from "./service-process.js";
import { type Reporter, round, seedBenchTenant } from "./shared.js";
import { BenchReceiver } from "./webhooks/receiver.js";

/**
 * The end-to-end delivery shapes, shared by bench/webhooks and bench/conversions: the service as
 * `npm start` runs it (`node dist/main.js`, one process with every role) on a PostgreSQL database
 * of its own, one tenant with one link, one click and one webhook to a loopback receiver, and
 * conversions posted by this process through `POST /api/v1/conversions` with an API key:
 *   steady-<rate>   single conversions of that one click (so every one updates the same rollup
 *                   row) posted at a steady rate, open loop (each on time, whether or not the
 *                   earlier ones were answered), for BENCH_DURATION_S after BENCH_WARMUP_S: the
 *                   answer's latency (post to answer) and the delivery's (answer to the
 *                   receiver's first request for it), p50/p99/max, and the rate achieved
 *   batches         BENCH_E2E_BATCH_TOTAL (default 5,000) conversions in batches of 500, two
 *                   posted at a time, from the first post to the last delivery: deliveries/s
 * Every conversion answered must reach the receiver within 60 s of the last post, or the run fails.
 */

const BATCH = 500;
const BATCHES_IN_FLIGHT = 2;
const DRAIN_TIMEOUT_MS = 60_000;

export const E2E_GOALS = {
  deliveryP50Ms: 50,
  deliveryP99Ms: 250,
  answerP50Ms: 10,
  batchDeliveriesPerSec: 2000,
} as const;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))] ?? Number.NaN;
}

function spread(values: number[]): { p50Ms: number; p99Ms: number; maxMs: number } {
  const sorted = [...values].sort((a, b) => a - b);
  return {
    p50Ms: round(percentile(sorted, 50)),
    p99Ms: round(percentile(sorted, 99)),
    maxMs: round(sorted[sorted.length - 1] ?? Number.NaN),
  };
}

const now = () => performance.timeOrigin + performance.now();

interface Service {
  started: Started;
  base: string;
  apiKey: string;
  clickId: string;
}

async function api(service: Omit<Service, "clickId" | "started">, agent: Agent, path: string, body: unknown) {
  const answer = await request(`${service.base}${path}`, {
    method: "POST",
    dispatcher: agent,
    headers: { authorization: service.apiKey, "content-type": "application/json" },
    body: JSON.stringify(body),
  });
  const parsed = (await answer.body.json()) as { data: Record<string, unknown> | null };
  return { status: answer.statusCode, data: parsed.data ?? {} };
}

/** The service on a database of its own, with a tenant, a catalog, one click and one webhook to `receiver`. */
async function startWithTenant(url: string, receiver: string, agent: Agent): Promise<Service> {
  const env: NodeJS.ProcessEnv = {
    ...process.env,
    DATABASE_URL: url,
    SEED_DEMO: "false",
    LOG_LEVEL: "warn",
    JWT_SECRET: randomBytes(32).toString("hex"),
    SECRETS_KEY: `bench:${randomBytes(32).toString("base64")}`,
    WEBHOOK_ALLOWED_HOSTS: "127.0.0.1",
    RATE_LIMIT_PER_MINUTE: "1000000",
    ...(process.env.BENCH_E2E_NO_CAPS
      ? {
          DELIVERY_IN_FLIGHT_PER_TENANT: process.env.BENCH_E2E_NO_CAPS,
          DELIVERY_IN_FLIGHT_PER_DESTINATION: process.env.BENCH_E2E_NO_CAPS,
        }
      : {}),
  };
  const started = await startService(env, "node");
  const base = `http://127.0.0.1:${started.port}`;
  const db = openPostgres({ connectionString: url, max: 2 });
  let apiKey: string;
  try {
    ({ apiKey } = await seedBenchTenant(db, { name: "Bench delivery", webhookAllowance: null }));
  } finally {
    await db.close();
  }
  const service = { base, apiKey };
  const create = async (path: string, body: Record<string, unknown>): Promise<unknown> => {
    const answer = await api(service, agent, `/api/v1/${path}`, body);
    if (answer.status !== 201)
      throw new Error(`POST ${path} answered ${answer.status}: ${JSON.stringify(answer.data)}`);
    return answer.data.id;
  };
  const brandId = await create("brands", { name: "Bench brand" });
  const programId = await create("programs", { name: "Bench program", brandIds: [brandId] });
  const accountId = await create("accounts", { name: "Bench account", programId, username: "bench" });
  const linkId = await create("links", {
    name: "Bench link",
    accountId,
    brandId,
    url: "https://brand.example/?c={clickId}",
  });
  const sourceId = await create("traffic-sources", { name: "Bench source" });
  await create("conversions/outgoing/webhooks/settings", {
    name: "Bench receiver",
    url: `${receiver}/hook?c=\${conversionId}&v=\${eventValue}`,
    method: "GET",
  });
  const click = await request(`${base}/go/${linkId}/${sourceId}`, {
    dispatcher: agent,
    headers: { "user-agent": "Mozilla/5.0 (X11; Linux x86_64) AppleWebKit/537.36 Chrome/126.0 Safari/537.36" },
  });
  await click.body.text();
  const clickId = new URL(String(click.headers.location ?? "http://x/")).searchParams.get("c");
  if (click.statusCode !== 302 || clickId === null) throw new Error(`the click answered ${click.statusCode}`);
  return { started, base, apiKey, clickId };
}

/** Waits until the receiver has seen every id, or fails naming how many it has not. */
async function drained(receiver: BenchReceiver, ids: Iterable<string>, label: string): Promise<void> {
  const waiting = [...ids];
  const deadline = performance.now() + DRAIN_TIMEOUT_MS;
  while (waiting.some((id) => !receiver.firstSeen.has(id))) {
    if (performance.now() > deadline) {
      const missing = waiting.filter((id) => !receiver.firstSeen.has(id)).length;
      throw new Error(`${label}: ${missing} conversions never reached the receiver`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

async function steady(
  service: Service,
  receiver: BenchReceiver,
  agent: Agent,
  rate: number,
  seconds: { warmupS: number; durationS: number },
  report: Reporter,
): Promise<Record<string, unknown>> {
  const total = Math.round((seconds.warmupS + seconds.durationS) * rate);
  const warm = Math.round(seconds.warmupS * rate);
  report.progress(`steady-${rate}: ${total} single conversions at ${rate}/s (the first ${warm} warm up)`);
  const answeredAt = new Map<string, number>();
  const answers: number[] = [];
  const began = performance.now();
  const posts: Promise<void>[] = [];
  let failures = 0;
  for (let n = 0; n < total; n++) {
    const wait = began + (n * 1000) / rate - performance.now();
    if (wait > 0) await new Promise((resolve) => setTimeout(resolve, wait));
    const sent = now();
    const item = { type: "Deposit", clickId: service.clickId, value: 10, currency: "EUR", externalId: `s${rate}-${n}` };
    posts.push(
      api(service, agent, "/api/v1/conversions", item).then(({ status, data }) => {
        const at = now();
        if (status !== 201 || typeof data.id !== "string") {
          failures += 1;
          return;
        }
        if (n < warm) return;
        answeredAt.set(data.id, at);
        answers.push(at - sent);
      }),
    );
  }
  await Promise.all(posts);
  const postedFor = (performance.now() - began) / 1000;
  if (failures > 0) throw new Error(`steady-${rate}: ${failures} conversions were not answered 201`);
  await drained(receiver, answeredAt.keys(), `steady-${rate}`);
  const deliveries = [...answeredAt].map(([id, at]) => (receiver.firstSeen.get(id) ?? Number.NaN) - at);
  const answer = spread(answers);
  const delivery = spread(deliveries);
  return {
    figure: `steady-${rate}`,
    db: "postgres",
    conversionsPerSec: rate,
    achievedPerSec: round(total / postedFor, 1),
    measured: deliveries.length,
    answer,
    delivery,
  };
}

async function batches(
  service: Service,
  receiver: BenchReceiver,
  agent: Agent,
  total: number,
  report: Reporter,
): Promise<Record<string, unknown>> {
  report.progress(`batches: ${total} conversions in batches of ${BATCH}, ${BATCHES_IN_FLIGHT} at a time`);
  const ids: string[] = [];
  let next = 0;
  const started = performance.now();
  await Promise.all(
    Array.from({ length: BATCHES_IN_FLIGHT }, async () => {
      while (next < total) {
        const first = next;
        const size = Math.min(BATCH, total - first);
        next += size;
        const items = Array.from({ length: size }, (_, i) => ({
          type: "Deposit",
          clickId: service.clickId,
          value: 10,
          currency: "EUR",
          externalId: `b-${first + i}`,
        }));
        const { status, data } = await api(service, agent, "/api/v1/conversions", { items });
        const recorded = data.items as { id: string }[] | undefined;
        if (status !== 201 || recorded?.length !== size) throw new Error(`a batch answered ${status}`);
        ids.push(...recorded.map((r) => r.id));
      }
    }),
  );
  const answeredS = (performance.now() - started) / 1000;
  await drained(receiver, ids, "batches");
  const last = Math.max(...ids.map((id) => receiver.firstSeen.get(id) ?? 0));
  const seconds = (last - (performance.timeOrigin + started)) / 1000;
  const perSec = total / seconds;
  return {
    figure: "batches",
    db: "postgres",
    conversions: total,
    answeredInS: round(answeredS),
    deliveredInS: round(seconds),
    deliveriesPerSec: round(perSec, 1),
  };
}

export interface EndToEndOptions {
  rates: number[];
  batchTotal: number;
  warmupS: number;
  durationS: number;
}

/** Runs the shapes on a fresh service and database; `emit` receives each shape's figures. */
export async function endToEnd(
  report: Reporter,
  options: EndToEndOptions,
  emit: (figures: Record<string, unknown>) => void,
): Promise<void> {
  await ensureServerBuilt();
  const receiver = new BenchReceiver();
  const receiverBase = await receiver.start();
  const agent = new Agent({ connections: 512 });
  try {
    await withPostgresDatabase("bench_delivery", report, async (url) => {
      const service = await startWithTenant(url, receiverBase, agent);
      try {
        for (const rate of options.rates) {
          emit(await steady(service, receiver, agent, rate, options, report));
        }
        if (options.batchTotal > 0) emit(await batches(service, receiver, agent, options.batchTotal, report));
      } finally {
        await stopService(service.started);
      }
    });
  } finally {
    await agent.close();
    await receiver.stop();
  }
}
