import { type Component, CRITICAL, type HealthCheck, type Status } from "./checks.js";

export interface CheckResult {
  name: string;
  component: Component;
  status: Status;
  durationMs: number;
  error: string | null;
}

export interface HealthReport {
  status: Status;
  components: Record<Component, { status: Status }>;
  checkedAt: string;
  checks: CheckResult[];
}

const CHECK_TIMEOUT_MS = 2000;
const COMPONENTS: Component[] = ["api", "database", "queue", "search"];
const RANK: Record<Status, number> = { healthy: 0, degraded: 1, unhealthy: 2 };

async function runCheck(check: HealthCheck): Promise<CheckResult> {
  const started = performance.now();
  let timer: NodeJS.Timeout | undefined;
  try {
    await Promise.race([
      check.run(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error(`timed out after ${CHECK_TIMEOUT_MS} ms`)), CHECK_TIMEOUT_MS);
      }),
    ]);
    return {
      name: check.name,
      component: check.component,
      status: "healthy",
      durationMs: elapsed(started),
      error: null,
    };
  } catch (error) {
    return {
      name: check.name,
      component: check.component,
      status: CRITICAL.has(check.component) ? "unhealthy" : "degraded",
      durationMs: elapsed(started),
      error: error instanceof Error ? error.message : String(error),
    };
  } finally {
    clearTimeout(timer);
  }
}

function elapsed(started: number): number {
  return Math.round((performance.now() - started) * 100) / 100;
}

function worst(statuses: Status[]): Status {
  return statuses.reduce<Status>((acc, s) => (RANK[s] > RANK[acc] ? s : acc), "healthy");
}

/** Runs every check at once and folds them: a component is as bad as its worst check. */
export async function buildReport(checks: HealthCheck[], now: Date): Promise<HealthReport> {
  const results = await Promise.all(checks.map(runCheck));
  const components = Object.fromEntries(
    COMPONENTS.map((component) => [
      component,
      { status: worst(results.filter((r) => r.component === component).map((r) => r.status)) },
    ]),
  ) as Record<Component, { status: Status }>;
  return {
    status: worst(Object.values(components).map((c) => c.status)),
    components,
    checkedAt: now.toISOString(),
    checks: results,
  };
}

/** Keeps one report for `ttlMs` and shares an in-flight run between concurrent callers. */
export class CachedReport {
  #report: { value: HealthReport; until: number } | undefined;
  #inFlight: Promise<HealthReport> | undefined;

  constructor(
    private readonly produce: () => Promise<HealthReport>,
    private readonly ttlMs: number,
  ) {}

  async get(): Promise<HealthReport> {
    if (this.#report && this.#report.until > Date.now()) return this.#report.value;
    this.#inFlight ??= this.produce()
      .then((value) => {
        this.#report = { value, until: Date.now() + this.ttlMs };
        return value;
      })
      .finally(() => {
        this.#inFlight = undefined;
      });
    return this.#inFlight;
  }
}
