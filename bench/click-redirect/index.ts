import { type ChildProcess, fork } from "node:child_process";
import { randomBytes } from "node:crypto";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Db } from "../../src/platform/db/index.js";
import { describe, measure, reporter, round, type Settings, settings, type Target } from "../shared.js";
import { type BackendCpu, backendCpu, backendCpuBetween } from "./backend-cpu.js";
import type { Catalog, FromParent, ToParent } from "./protocol.js";

/**
 * Click redirect: how much of a bare Fastify redirect's throughput survives our stack on the
 * hottest path of the product, what a recorded click costs in CPU, and whether every click it
 * answered is stored exactly once.
 *
 * The services run in processes of their own (service-process.ts), the load generator here, so
 * each process's CPU time is its own. Figures, each measured for BENCH_DURATION_S (default 10)
 * with BENCH_CONNECTIONS (default 50) after a short warm-up, per database (PGlite in memory;
 * PostgreSQL when reachable), BENCH_DATABASES choosing:
 *   bare            GET /go/{linkId}/{sourceId}?gclid=abc&tracker=benchtracker on a one-route Fastify
 *                   app answering 302 to a fixed Location: the baseline, measured right before;
 *                   with its CPU time per 1,000 requests
 *   click-redirect  the same request (browser user agent) on the real app: a counted click, 302 to
 *                   the brand link's url; reported as a ratio of the bare route
 *   click-cpu       CPU time per 1,000 recorded clicks over the probe, warm-up and run, the
 *                   buffer flushed at the end: the service process and (PostgreSQL) its backends
 *   click-route-only the same requests from a known bot (Googlebot's user agent): recorded as bot
 *                   clicks (flagged, counted apart, no tracker, no click hooks); ratio to bare, and
 *                   CPU per 1,000 including their writes
 *   click-stages    CPU per 1,000 by stage: buffer and write from BENCH_CLICK_STAGE_CLICKS (default
 *                   20,000) clicks added to the app's own buffer without the route, then written
 *                   (service and backends); route (click-route-only less buffer and write); facts,
 *                   the click facts' lookups alone (country, data center, the user agent from its
 *                   cache) over BENCH_CLICK_FACTS_LOOKUPS (default 100,000) different addresses,
 *                   and factsNewAgent, the same for a user agent not yet cached; and what
 *                   recording cost under load (click-cpu less the route)
 *   click-statement EXPLAIN ANALYZE of one 2,000-click batch statement (rolled back): its time in
 *                   the database per 1,000 clicks, by step (the statement's CTEs)
 *   clicks-stored   after a graceful close (which flushes the click buffer): the clicks table holds
 *                   one row per 302 the load generator got (probe, warm-up and measured run, the
 *                   bot's run included: its clicks are stored flagged) plus the stage clicks, and
 *                   the rollups count each once (clicks + bot_clicks). A timed run ends by dropping its connections with requests in
 *                   flight; the route may have counted those too, so up to `unanswered` rows more
 *                   than `expected` are allowed. Fewer rows (lost), more than that (stored twice), a
 *                   daily rollup that disagrees, or a buffer that wrote or dropped a different
 *                   number exits non-zero.
 * The load generator runs in BENCH_WORKERS worker threads (default 1; 0 = on the main thread).
 * BENCH_CLICK_CPU_PROF=<dir> writes a V8 CPU profile of each service process there.
 */

const BENCH = "click-redirect";
const GOAL_RATIO = 0.6;
const QUERY = "gclid=abc&tracker=benchtracker";
const BROWSER = {
  "user-agent":
    "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
  accept: "text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8",
  "accept-language": "en-US,en;q=0.9",
};
// A known bot: the route does all its work (cache, click id, the click's facts); the click is stored
// flagged and counted apart, with no tracker and no click hooks.
const BOT = { ...BROWSER, "user-agent": "Mozilla/5.0 (compatible; Googlebot/2.1; +http://www.google.com/bot.html)" };
const SERVICE_SCRIPT = fileURLToPath(new URL("./service-process.ts", import.meta.url));
const DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test";
const EXPLAIN_BATCH = 2000;
const report = reporter(BENCH);

type Reply<K extends ToParent["type"]> = Extract<ToParent, { type: K }>;

/** A service process and a request/answer channel to it (one request at a time). */
class Service {
  private waiting: { type: string; resolve: (m: ToParent) => void; reject: (e: Error) => void } | null = null;

  private constructor(readonly child: ChildProcess) {
    child.on("message", (message: ToParent) => {
      const waiting = this.waiting;
      if (waiting === null) return;
      this.waiting = null;
      if (message.type === "failed") waiting.reject(new Error(`service process: ${message.message}`));
      else if (message.type !== waiting.type)
        waiting.reject(new Error(`expected ${waiting.type}, got ${message.type}`));
      else waiting.resolve(message);
    });
    child.on("exit", (code) => this.waiting?.reject(new Error(`service process exited (${code})`)));
  }

  static async start(env: Record<string, string>): Promise<{ service: Service; ready: Reply<"ready"> }> {
    const child = fork(SERVICE_SCRIPT, [], {
      env: { ...process.env, ...env },
      // BENCH_CLICK_CPU_PROF=<dir>: a V8 CPU profile of each service process, written as it exits.
      execArgv: [
        "--import",
        "tsx",
        ...(process.env.BENCH_CLICK_CPU_PROF
          ? ["--cpu-prof", `--cpu-prof-dir=${process.env.BENCH_CLICK_CPU_PROF}`]
          : []),
      ],
      stdio: ["ignore", "inherit", "inherit", "ipc"],
    });
    const service = new Service(child);
    const ready = await service.expect("ready");
    return { service, ready };
  }

  private expect<K extends ToParent["type"]>(type: K): Promise<Reply<K>> {
    return new Promise((resolve, reject) => {
      this.waiting = { type, resolve: resolve as (m: ToParent) => void, reject };
    });
  }

  ask<K extends ToParent["type"]>(message: FromParent, answer: K): Promise<Reply<K>> {
    const reply = this.expect(answer);
    this.child.send(message);
    return reply;
  }

  async cpuUs(): Promise<{ us: number; userUs: number; written: number }> {
    const cpu = await this.ask({ type: "cpu" }, "cpu");
    return { us: cpu.userUs + cpu.systemUs, userUs: cpu.userUs, written: cpu.written };
  }

  /** Stops the process; for the app, after its graceful close and the count of what it stored. */
  async stop(): Promise<Reply<"stopped"> | null> {
    const exited = new Promise<void>((resolve) => this.child.once("exit", () => resolve()));
    if (this.child.exitCode !== null) return null;
    const stopped = this.expect("stopped").catch(() => null);
    this.child.send({ type: "stop" } satisfies FromParent);
    const result = await Promise.race([stopped, exited.then(() => null)]);
    await exited;
    return result;
  }
}

/** CPU of the PostgreSQL backends of one service, when it runs on PostgreSQL. */
interface Backends {
  admin: pg.Client;
  applicationName: string;
}

const snapshot = async (backends: Backends | null): Promise<BackendCpu> =>
  backends === null ? new Map() : backendCpu(backends.admin, backends.applicationName);

const per1000 = (us: number, count: number) => (count > 0 ? round(us / 1000 / (count / 1000), 1) : null);

async function benchDatabase(kind: Db["kind"], s: Settings, env: Record<string, string>, backends: Backends | null) {
  const stageClicks = Math.round(Number(process.env.BENCH_CLICK_STAGE_CLICKS ?? 20_000));
  const { service: bare, ready: bareReady } = await Service.start({ BENCH_CLICK_ROLE: "bare" });
  let app: Service | undefined;
  try {
    const { service, ready } = await Service.start({ ...env, BENCH_CLICK_ROLE: "app" });
    app = service;
    const catalog = ready.catalog as Catalog;
    const path = `/go/${catalog.linkId}/${catalog.trafficSourceId}?${QUERY}`;
    const bareTarget: Target = { url: `${bareReady.url}${path}`, headers: BROWSER, status: 302 };
    const clickTarget: Target = { url: `${ready.url}${path}`, headers: BROWSER, status: 302 };

    const bareBefore = await bare.cpuUs();
    const baseline = await measure(`${kind} bare (for ${BENCH})`, bareTarget, s, report);
    const bareCpu = (await bare.cpuUs()).us - bareBefore.us;
    report.emit({
      figure: "bare",
      db: kind,
      pairedWith: BENCH,
      ...baseline.measurement,
      cpuMsPer1000: per1000(bareCpu, baseline.answered),
      connections: s.connections,
      durationS: s.durationS,
    });
    await bare.stop();

    const before = await app.cpuUs();
    const backendsBefore = await snapshot(backends);
    const click = await measure(`${kind} ${BENCH}`, clickTarget, s, report);
    await app.ask({ type: "flush" }, "flushed");
    const after = await app.cpuUs();
    const backendUs = backendCpuBetween(backendsBefore, await snapshot(backends));
    const recorded = after.written - before.written;
    report.emit({
      figure: BENCH,
      db: kind,
      ...click.measurement,
      baselineReqPerSec: baseline.measurement.reqPerSec,
      ratio: round(click.measurement.reqPerSec / baseline.measurement.reqPerSec, 3),
      goal: `>= ${GOAL_RATIO} of bare route`,
      connections: s.connections,
      durationS: s.durationS,
    });
    const serviceMs = per1000(after.us - before.us, recorded);
    report.emit({
      figure: "click-cpu",
      db: kind,
      recorded,
      serviceMsPer1000: serviceMs,
      // User time is our code and its garbage collection; system time mostly the loopback sends.
      serviceUserMsPer1000: per1000(after.userUs - before.userUs, recorded),
      backendsMsPer1000: backends === null ? null : per1000(backendUs, recorded),
      bareServiceMsPer1000: per1000(bareCpu, baseline.answered),
    });

    // The same requests from a bot: answered alike, recorded as bot clicks (written by the flush).
    const botTarget: Target = { url: clickTarget.url, headers: BOT, status: 302 };
    const routeBefore = await app.cpuUs();
    const routeOnly = await measure(`${kind} bot clicks`, botTarget, s, report);
    await app.ask({ type: "flush" }, "flushed");
    const routeAfter = await app.cpuUs();
    const routeMs = per1000(routeAfter.us - routeBefore.us, routeOnly.answered);
    report.emit({
      figure: "click-route-only",
      db: kind,
      ...routeOnly.measurement,
      ratio: round(routeOnly.measurement.reqPerSec / baseline.measurement.reqPerSec, 3),
      serviceMsPer1000: routeMs,
      serviceUserMsPer1000: per1000(routeAfter.userUs - routeBefore.userUs, routeOnly.answered),
    });

    const stagesBackends = await snapshot(backends);
    const stages = await app.ask({ type: "record", clicks: stageClicks }, "recorded");
    const stagesBackendUs = backendCpuBetween(stagesBackends, await snapshot(backends));
    const bufferMs = per1000(stages.bufferUs, stages.clicks) ?? 0;
    const writeMs = per1000(stages.writeUs, stages.clicks) ?? 0;
    const facts = await app.ask(
      { type: "facts", lookups: Math.round(Number(process.env.BENCH_CLICK_FACTS_LOOKUPS ?? 100_000)) },
      "facts",
    );
    // The bot's run wrote its clicks as people's are written: the route is what is left.
    const routeAloneMs = routeMs === null ? null : round(routeMs - bufferMs - writeMs, 1);
    report.emit({
      figure: "click-stages",
      db: kind,
      clicks: stages.clicks,
      serviceMsPer1000: {
        route: routeAloneMs,
        // Microseconds a call are milliseconds per 1,000; part of the route's figure.
        facts: round(facts.perClickUs, 1),
        factsNewAgent: round(facts.newAgentUs, 1),
        buffer: bufferMs,
        write: writeMs,
        // What recording costs under load beyond the route, against the writes measured alone.
        recordingUnderLoad: serviceMs === null || routeAloneMs === null ? null : round(serviceMs - routeAloneMs, 1),
      },
      backendsMsPer1000: backends === null ? null : { write: per1000(stagesBackendUs, stages.clicks) },
      writeClicksPerS: Math.round(stages.clicks / (stages.writeWallMs / 1000)),
    });

    const explained = await app.ask({ type: "explain", clicks: EXPLAIN_BATCH }, "explained");
    const scale = 1000 / explained.clicks;
    report.emit({
      figure: "click-statement",
      db: kind,
      batch: explained.clicks,
      dbMsPer1000: round(explained.executionMs * scale, 1),
      planningMsPerBatch: round(explained.planningMs, 1),
      byStepMsPer1000: Object.fromEntries(
        Object.entries(explained.byStep)
          .sort(([, a], [, b]) => b - a)
          .map(([step, ms]) => [step, round(ms * scale, 1)]),
      ),
    });

    const stopped = await app.stop();
    app = undefined;
    if (stopped === null) throw new Error("the app stopped without counting its clicks");
    const expected = click.answered + routeOnly.answered + stages.clicks;
    const unanswered = click.unanswered + routeOnly.unanswered;
    const { stored, rolledUp } = stopped;
    const lost = Math.max(0, expected - stored);
    const extra = Math.max(0, stored - expected);
    const problems = [
      ...(lost > 0 ? [`${lost} answered click(s) not stored`] : []),
      ...(extra > unanswered ? [`${extra - unanswered} click(s) more than were requested (stored twice?)`] : []),
      ...(rolledUp !== stored ? [`daily rollups count ${rolledUp} clicks, the table holds ${stored}`] : []),
      ...(stopped.written !== stored ? [`the click buffer wrote ${stopped.written}, the table holds ${stored}`] : []),
      ...(stopped.dropped > 0 ? [`the click buffer dropped ${stopped.dropped}`] : []),
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
      bufferWritten: stopped.written,
      bufferDropped: stopped.dropped,
      ok: problems.length === 0,
    });
    if (problems.length > 0) {
      report.progress(`${kind} clicks-stored: ${problems.join("; ")}`);
      process.exitCode = 1;
    }
  } finally {
    await app?.stop().catch(() => undefined);
    await bare.stop().catch(() => undefined);
  }
}

/** A fresh schema on PostgreSQL for the service, dropped afterwards; null (and a line) when unreachable. */
async function withPostgres(s: Settings, fn: (env: Record<string, string>, backends: Backends) => Promise<void>) {
  const url = s.postgresUrl || DEFAULT_POSTGRES_URL;
  report.progress(`postgres: connecting to ${url.replace(/\/\/[^@/]*@/, "//***@")}`);
  const admin = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => undefined);
    const reason = error instanceof Error ? error.message : String(error);
    report.emit({ figure: "all", db: "postgres", skipped: true, reason });
    return;
  }
  const schema = `bench_${randomBytes(6).toString("hex")}`;
  try {
    await admin.query(`create schema ${schema}`);
    // Migrated here: the service process opens the schema as a node of an existing deployment.
    const { openPostgres } = await import("../../src/platform/db/postgres.js");
    const { migrate } = await import("../../src/platform/db/index.js");
    const db = openPostgres({ connectionString: url, schema, max: 2 });
    try {
      await migrate(db);
    } finally {
      await db.close();
    }
    const applicationName = `bench_click_${schema}`;
    await fn(
      {
        BENCH_CLICK_DB: "postgres",
        BENCH_CLICK_DATABASE_URL: url,
        BENCH_CLICK_SCHEMA: schema,
        BENCH_CLICK_APP_NAME: applicationName,
      },
      { admin, applicationName },
    );
  } finally {
    await admin.query(`drop schema if exists ${schema} cascade`).catch(() => undefined);
    await admin.end();
  }
}

export async function run(): Promise<void> {
  const s = settings();
  report.progress(describe(s));
  if (s.databases.includes("pglite")) {
    report.progress("pglite: in-memory database in the service process");
    await benchDatabase("pglite", s, { BENCH_CLICK_DB: "pglite" }, null);
  }
  if (s.databases.includes("postgres")) {
    await withPostgres(s, (env, backends) => benchDatabase("postgres", s, env, backends));
  }
  report.progress("done");
}
