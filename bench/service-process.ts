import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { Reporter } from "./shared.js";

/**
 * The service as an operator runs it, in a process of its own (`npm start`, or `node dist/main.js`,
 * the build `npm start` runs), for the benchmarks that measure it from outside: startup and memory,
 * and the end-to-end delivery shapes (the load generator must not share the service's event loop).
 */

const ROOT = fileURLToPath(new URL("../", import.meta.url));
const DEFAULT_POSTGRES_URL = "postgres://postgres@127.0.0.1:5432/test";
const HEALTH_TIMEOUT_MS = 120_000;
const STOP_TIMEOUT_MS = 30_000;

export type Command = "npm" | "node" | "tsx";

const ARGS: Record<Command, [string, string[]]> = {
  npm: ["npm", ["start", "--silent"]],
  node: ["node", ["dist/main.js"]],
  tsx: ["node", ["--import", "tsx", "src/main.ts"]],
};

export const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const address = server.address();
      const port = typeof address === "object" && address !== null ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

export interface Started {
  child: ChildProcess;
  port: number;
  healthyMs: number;
  output: string[];
}

/** Starts the service and waits for a healthy /api/health; the time is from spawn to that answer. */
export async function startService(env: NodeJS.ProcessEnv, command: Command): Promise<Started> {
  const port = await freePort();
  const started = performance.now();
  const [file, args] = ARGS[command];
  // Its own process group, so whatever it leaves behind can be stopped by its group id.
  const child = spawn(file, args, {
    cwd: ROOT,
    env: { ...env, PORT: String(port), HOST: "127.0.0.1" },
    stdio: ["ignore", "pipe", "pipe"],
    detached: true,
  });
  const output: string[] = [];
  // The demo's one-time secrets are in the banner: an error shows the log without them.
  const keep = (chunk: Buffer) => {
    output.push(
      chunk
        .toString()
        .split("\n")
        .filter((line) => !/(login|key|postback url):/i.test(line))
        .join("\n"),
    );
    if (output.length > 200) output.shift();
  };
  child.stdout?.on("data", keep);
  child.stderr?.on("data", keep);
  let exited: number | null = null;
  child.once("exit", (code) => {
    exited = code ?? -1;
  });
  while (performance.now() - started < HEALTH_TIMEOUT_MS) {
    if (exited !== null) throw new Error(`the service exited (${exited}) before it was healthy:\n${output.join("")}`);
    try {
      const res = await fetch(`http://127.0.0.1:${port}/api/health`);
      await res.arrayBuffer();
      if (res.status === 200) return { child, port, healthyMs: performance.now() - started, output };
    } catch {
      // Not listening yet.
    }
    await sleep(25);
  }
  killGroup(child);
  throw new Error(`not healthy within ${HEALTH_TIMEOUT_MS} ms:\n${output.join("")}`);
}

function killGroup(child: ChildProcess): void {
  if (child.pid === undefined) return;
  try {
    process.kill(-child.pid, "SIGKILL");
  } catch {
    // Already gone.
  }
}

/** SIGTERM as an operator would send it (to the process npm start made), then its exit. */
export async function stopService(started: Started): Promise<void> {
  const { child } = started;
  if (child.exitCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  const timeout = sleep(STOP_TIMEOUT_MS).then(() => "timeout" as const);
  if ((await Promise.race([exited, timeout])) === "timeout") {
    killGroup(child);
    throw new Error(`the service did not stop within ${STOP_TIMEOUT_MS} ms:\n${started.output.join("")}`);
  }
  // Anything of its group still alive (it should be none) does not outlive the run.
  killGroup(child);
}

/**
 * A database of its own on the server of BENCH_DATABASE_URL (named `<prefix>_<random>`), dropped
 * after the run; false, with a skipped figure, when the server cannot be reached.
 */
export async function withPostgresDatabase(
  prefix: string,
  report: Reporter,
  fn: (url: string) => Promise<void>,
): Promise<boolean> {
  const base = process.env.BENCH_DATABASE_URL?.trim() || DEFAULT_POSTGRES_URL;
  const name = `${prefix}_${randomBytes(4).toString("hex")}`;
  const admin = new pg.Client({ connectionString: base, connectionTimeoutMillis: 3000 });
  try {
    await admin.connect();
  } catch (error) {
    await admin.end().catch(() => undefined);
    report.emit({ figure: "all", db: "postgres", skipped: true, reason: String(error) });
    return false;
  }
  try {
    await admin.query(`create database ${name}`);
    const url = new URL(base);
    url.pathname = `/${name}`;
    await fn(url.toString());
  } finally {
    await admin.query(`drop database if exists ${name} with (force)`).catch(() => undefined);
    await admin.end();
  }
  return true;
}
