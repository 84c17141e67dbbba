import { randomBytes } from "node:crypto";
import { readFileSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { ensureServerBuilt } from "../../scripts/build-server.js";
import {
  type Command,
  type Started,
  sleep,
  startService,
  stopService,
  withPostgresDatabase,
} from "../service-process.js";
import { reporter, round } from "../shared.js";
import { peakRss, processTree } from "./process-tree.js";

/**
 * Startup: what `npm start` costs in time and memory, on the embedded database and on PostgreSQL.
 *
 * Per database (BENCH_DATABASES, default both; PostgreSQL in a database of its own made for the
 * run and dropped after it, on BENCH_DATABASE_URL's server):
 *   first-start  `npm start` on an empty DATA_DIR (migrations, demo data) to the first healthy
 *                answer of GET /api/health; with the server's own `startupMs` (its `started` log
 *                line: milliseconds since its process started at the end of each step)
 *   restart      stopped with SIGTERM and started again on the same DATA_DIR to healthy
 *                (BENCH_STARTUP_RESTARTS times, default 3: each time printed, and the median)
 *   idle-rss     after the last restart and BENCH_STARTUP_IDLE_S (default 10) of idleness: the
 *                resident set of every process `npm start` left running (npm, a shell, tsx, the
 *                server: whichever are really there), and their sum; the server's peak too
 * SEED_DEMO is on for both databases, so the two figures hold the same data.
 * BENCH_STARTUP_COMMAND=node runs `node dist/main.js` (the build `npm start` runs, made first if
 * stale) instead of `npm start`, without npm and the prestart build checks, to tell their share;
 * BENCH_STARTUP_COMMAND=tsx runs the sources through tsx (`node --import tsx src/main.ts`).
 */

const BENCH = "startup";
const COMMANDS: readonly Command[] = ["npm", "node", "tsx"];
const report = reporter(BENCH);

function setting(name: string, fallback: number): number {
  const raw = process.env[name]?.trim();
  const value = raw === undefined || raw === "" ? fallback : Number(raw);
  if (!Number.isFinite(value) || value < 0) throw new Error(`${name} must be a non-negative number, got '${raw}'`);
  return value;
}

/** The server among the processes a command left running. */
const isServer = (command: string) => /(src\/main\.ts|dist\/main\.js)/.test(command);

interface StartedMeasured extends Started {
  /** CPU time the processes still running had used by then (those that had exited not counted). */
  cpuMs: number;
  /** The server's own `startupMs` from its `started` line, when it logged one. */
  startupMs: Record<string, number> | undefined;
}

/** Starts the service to healthy, with the CPU it used and the startup steps it logged. */
async function start(env: NodeJS.ProcessEnv, command: Command): Promise<StartedMeasured> {
  const started = await startService(env, command);
  const cpu = treeCpuMs(started.child.pid as number);
  // The `started` line is written just before the port answers; a moment for it to arrive.
  for (let i = 0; i < 40 && startupMs(started.output) === undefined; i++) await sleep(25);
  return { ...started, cpuMs: cpu, startupMs: startupMs(started.output) };
}

const stop = stopService;

/** The `startupMs` of the `started` log line (pino's JSON) in the output so far. */
function startupMs(output: string[]): Record<string, number> | undefined {
  for (const line of output.join("").split("\n")) {
    if (!line.includes('"startupMs"')) continue;
    try {
      const parsed = JSON.parse(line) as { startupMs?: Record<string, number> };
      if (parsed.startupMs !== undefined) return parsed.startupMs;
    } catch {
      // Not a whole JSON line.
    }
  }
  return undefined;
}

const TICKS_PER_S = 100;

/** CPU time (user + system) one process has used so far, in ms; null when it is gone. */
function cpuMs(pid: number): number | null {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / TICKS_PER_S;
  } catch {
    return null;
  }
}

/** CPU time of the whole tree, at the moment it was first healthy. */
function treeCpuMs(root: number): number {
  return processTree(root).reduce((sum, p) => sum + (cpuMs(p.pid) ?? 0), 0);
}

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1
    ? (sorted[mid] as number)
    : ((sorted[mid - 1] as number) + (sorted[mid] as number)) / 2;
}

const MB = 1024 * 1024;

async function measureDatabase(kind: "pglite" | "postgres", env: NodeJS.ProcessEnv): Promise<void> {
  const chosen = process.env.BENCH_STARTUP_COMMAND?.trim() || "npm";
  if (!COMMANDS.some((c) => c === chosen))
    throw new Error(`BENCH_STARTUP_COMMAND must be npm, node or tsx, got '${chosen}'`);
  const command = chosen as Command;
  if (command === "node") await ensureServerBuilt();
  const restarts = Math.max(1, Math.round(setting("BENCH_STARTUP_RESTARTS", 3)));
  const idleS = setting("BENCH_STARTUP_IDLE_S", 10);

  report.progress(`${kind}: first start (${command})`);
  let running = await start(env, command);
  report.emit({
    figure: "first-start",
    db: kind,
    command,
    healthyMs: Math.round(running.healthyMs),
    cpuMs: Math.round(running.cpuMs),
    startupMs: running.startupMs,
  });
  const times: number[] = [];
  try {
    for (let i = 0; i < restarts; i++) {
      await stop(running);
      report.progress(`${kind}: restart ${i + 1} of ${restarts}`);
      running = await start(env, command);
      times.push(running.healthyMs);
      report.emit({
        figure: "restart",
        db: kind,
        command,
        run: i + 1,
        healthyMs: Math.round(running.healthyMs),
        cpuMs: Math.round(running.cpuMs),
        startupMs: running.startupMs,
      });
    }
    report.emit({
      figure: "restart-median",
      db: kind,
      command,
      healthyMs: Math.round(median(times)),
      goal: kind === "pglite" ? "<= 3000 ms" : undefined,
    });

    report.progress(`${kind}: idle ${idleS}s`);
    await sleep(idleS * 1000);
    const pid = running.child.pid as number;
    const tree = processTree(pid);
    const total = tree.reduce((sum, p) => sum + p.rssBytes, 0);
    const server = tree.find((p) => isServer(p.command));
    report.emit({
      figure: "idle-rss",
      db: kind,
      command,
      totalMb: round(total / MB, 1),
      processes: tree.map((p) => ({ pid: p.pid, command: p.command, rssMb: round(p.rssBytes / MB, 1) })),
      serverPeakMb: server === undefined ? null : round((peakRss(server.pid) ?? 0) / MB, 1),
      goal: kind === "pglite" ? "<= 350 MB" : "<= 150 MB",
    });
  } finally {
    await stop(running).catch((error: unknown) => report.progress(String(error)));
  }
}

export async function run(): Promise<void> {
  const databases = (process.env.BENCH_DATABASES ?? "pglite,postgres").split(",").map((d) => d.trim());
  const base: NodeJS.ProcessEnv = { ...process.env, SEED_DEMO: "true", LOG_LEVEL: "info" };
  delete base.DATABASE_URL;
  if (databases.includes("pglite")) {
    const dataDir = await mkdtemp(join(tmpdir(), "bench-startup-"));
    try {
      await measureDatabase("pglite", { ...base, DATA_DIR: dataDir });
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  if (databases.includes("postgres")) {
    const dataDir = await mkdtemp(join(tmpdir(), "bench-startup-"));
    try {
      await withPostgresDatabase("bench_startup", report, (url) =>
        // A PostgreSQL node refuses to start without the secrets every node shares.
        measureDatabase("postgres", {
          ...base,
          DATA_DIR: dataDir,
          DATABASE_URL: url,
          JWT_SECRET: randomBytes(32).toString("hex"),
          SECRETS_KEY: `bench:${randomBytes(32).toString("base64")}`,
        }),
      );
    } finally {
      await rm(dataDir, { recursive: true, force: true });
    }
  }
  report.progress("done");
}
