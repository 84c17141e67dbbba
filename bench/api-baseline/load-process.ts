import autocannon from "autocannon";

/**
 * The load generator in a process of its own, so that the service's process.cpuUsage() holds
 * the service's work only. Reads its run from argv[2] (JSON), answers one JSON line on stdout.
 */

interface Run {
  url: string;
  headers: Record<string, string>;
  connections: number;
  durationS: number;
  workers: number;
}

export interface LoadResult {
  statusCodes: Record<string, number>;
  errors: number;
  timeouts: number;
  sent: number;
  reqPerSec: number;
  p50Ms: number;
  p99Ms: number;
}

async function main(): Promise<void> {
  const run = JSON.parse(process.argv[2] ?? "{}") as Run;
  const result = await autocannon({
    url: run.url,
    headers: run.headers,
    connections: run.connections,
    duration: run.durationS,
    ...(run.workers > 0 ? { workers: run.workers } : {}),
  });
  const statusCodes: Record<string, number> = {};
  for (const [code, stat] of Object.entries(result.statusCodeStats ?? {})) statusCodes[code] = stat.count ?? 0;
  const answer: LoadResult = {
    statusCodes,
    errors: result.errors,
    timeouts: result.timeouts,
    sent: result.requests.sent,
    reqPerSec: result.requests.average,
    p50Ms: result.latency.p50,
    p99Ms: result.latency.p99,
  };
  process.stdout.write(`${JSON.stringify(answer)}\n`);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
