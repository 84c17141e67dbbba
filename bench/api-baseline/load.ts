import { spawn } from "node:child_process";
import { fileURLToPath } from "node:url";
import { type Reporter, round, type Settings, type Target } from "../shared.js";
import { type Backends, type Cost, costSince, markCost, perThousand } from "./cost.js";
import type { LoadResult } from "./load-process.js";
import { startProfile } from "./profile.js";

const LOAD_SCRIPT = fileURLToPath(new URL("./load-process.ts", import.meta.url));

/** One autocannon run in a child process. */
function load(target: Target, durationS: number, s: Settings): Promise<LoadResult> {
  const run = {
    url: target.url,
    headers: target.headers ?? {},
    connections: s.connections,
    durationS,
    workers: s.workers,
  };
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, ["--import", "tsx", LOAD_SCRIPT, JSON.stringify(run)], {
      stdio: ["ignore", "pipe", "inherit"],
    });
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
    });
    child.once("error", reject);
    child.once("exit", (code) => {
      if (code !== 0) return reject(new Error(`load generator exited with ${code}`));
      try {
        resolve(JSON.parse(out) as LoadResult);
      } catch (error) {
        reject(error);
      }
    });
  });
}

function isExpected(target: Target, status: number): boolean {
  return target.status === undefined ? status >= 200 && status < 300 : status === target.status;
}

/** Answers with the expected status; anything else (another status, an error, a timeout) aborts the run. */
function requireAllOk(figure: string, target: Target, result: LoadResult): number {
  let ok = 0;
  let other = 0;
  for (const [code, count] of Object.entries(result.statusCodes)) {
    if (isExpected(target, Number(code))) ok += count;
    else other += count;
  }
  if (other + result.errors + result.timeouts === 0 && ok > 0) return ok;
  throw new Error(
    `${figure}: ${ok} expected, ${other} other (${JSON.stringify(result.statusCodes)}), ${result.errors} errors, ` +
      `${result.timeouts} timeouts; every measured response must have the expected status`,
  );
}

export interface CostedMeasurement {
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
  requests: number;
  /** CPU ms per 1,000 answered requests: the service's process, and its PostgreSQL backends (null on PGlite). */
  serviceCpuMsPer1k: number | null;
  databaseCpuMsPer1k: number | null;
}

/**
 * A probe request, a warm-up, then the measured run with the load generator in a child
 * process, and the CPU the service (and its PostgreSQL backends) spent on it.
 */
export async function measureCost(
  figure: string,
  target: Target,
  s: Settings,
  r: Reporter,
  backends?: { meter: Backends; applicationName: string },
): Promise<CostedMeasurement> {
  const probe = await fetch(target.url, { headers: target.headers ?? {}, redirect: "manual" });
  if (!isExpected(target, probe.status))
    throw new Error(`${figure}: probe answered ${probe.status}: ${await probe.text()}`);
  await probe.arrayBuffer();
  if (s.warmupS > 0) {
    r.progress(`${figure}: warming up ${s.warmupS}s`);
    requireAllOk(`${figure} (warm-up)`, target, await load(target, s.warmupS, s));
  }
  r.progress(`${figure}: measuring ${s.durationS}s with ${s.connections} connections`);
  const stopProfile = await startProfile(figure);
  const mark = await markCost(backends);
  const result = await load(target, s.durationS, s);
  const cost: Cost = await costSince(mark, backends);
  if (stopProfile) r.progress(`${figure}: CPU profile in ${await stopProfile()}`);
  const requests = requireAllOk(figure, target, result);
  return {
    reqPerSec: round(result.reqPerSec, 1),
    p50Ms: result.p50Ms,
    p99Ms: result.p99Ms,
    requests,
    serviceCpuMsPer1k: perThousand(cost.serviceMs, requests),
    databaseCpuMsPer1k: perThousand(cost.databaseMs, requests),
  };
}
