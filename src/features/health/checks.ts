import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { HEARTBEAT_STALE_MS } from "../../platform/heartbeat.js";

export type Component = "api" | "database" | "queue" | "search";
export type Status = "healthy" | "degraded" | "unhealthy";

/** A check resolves when all is well and throws with the reason when not. */
export interface HealthCheck {
  name: string;
  component: Component;
  run(): Promise<void>;
}

/** api and database down make the service unusable (503); queue and search only degrade it. */
export const CRITICAL: ReadonlySet<Component> = new Set(["api", "database"]);

/** Trigram indexes that name searches rely on; features append theirs. */
export const SEARCH_INDEXES = [
  "tenants_name_trgm",
  "users_name_trgm",
  "brands_name_trgm",
  "programs_name_trgm",
  "accounts_name_trgm",
  "links_name_trgm",
  "traffic_sources_name_trgm",
  "trackers_name_trgm",
];

// A job run unfinished after this long is stuck (its node died mid-run).
const STUCK_RUN_MS = 60 * 60 * 1000;

export interface CheckDeps {
  db: Db;
  clock: Clock;
  /** True once the server has begun shutting down. */
  isClosing: () => boolean;
}

/**
 * A statement that has held the database this long is not one of the checks' own (each takes a
 * millisecond or so): a check waiting behind it answers its last result. Looked at every
 * BUSY_TICK_MS, so /api/health answers in about their sum at worst.
 */
const BUSY_HELD_MS = 50;
const BUSY_TICK_MS = 5;

/**
 * On the embedded database one statement runs at a time: behind a report statement of seconds a
 * check's query waits as long, and /api/health with it (a load balancer would take the node out).
 * So a check that needs the database, while a long statement holds it, answers its last result;
 * its run goes on and updates it. The database at work is itself alive. PostgreSQL has no
 * `busySince` (a pool): there a check always waits for its answer.
 */
function answersWhileBusy(db: Db, check: HealthCheck): HealthCheck {
  let last: { failed: false } | { failed: true; error: unknown } | undefined;
  // One run at a time: asked again while it waits, the check joins it rather than queue another.
  let running: Promise<void> | undefined;
  return {
    ...check,
    run() {
      running ??= check
        .run()
        .then(
          () => {
            last = { failed: false };
          },
          (error: unknown) => {
            last = { failed: true, error };
            throw error;
          },
        )
        .finally(() => {
          running = undefined;
        });
      const fresh = running;
      const before = last;
      const busySince = db.busySince?.bind(db);
      if (before === undefined || busySince === undefined) return fresh;
      return new Promise<void>((resolve, reject) => {
        const timer = setInterval(() => {
          const since = busySince();
          if (since === undefined || performance.now() - since < BUSY_HELD_MS) return;
          clearInterval(timer);
          fresh.catch(() => undefined);
          if (before.failed) reject(before.error);
          else resolve();
        }, BUSY_TICK_MS);
        fresh.then(resolve, reject).finally(() => clearInterval(timer));
      });
    },
  };
}

export function defaultChecks(deps: CheckDeps): HealthCheck[] {
  const heartbeat = (role: "worker" | "scheduler"): HealthCheck => ({
    name: `${role}-heartbeat`,
    component: "queue",
    async run() {
      const since = new Date(deps.clock.now().getTime() - HEARTBEAT_STALE_MS);
      const [row] = await deps.db.query<{ n: number }>(
        "select count(*)::int as n from node_heartbeats where role = $1 and last_seen_at >= $2",
        [role, since],
      );
      if (!row || row.n === 0)
        throw new Error(`no ${role} node has sent a heartbeat in the last ${HEARTBEAT_STALE_MS / 1000} s`);
    },
  });
  const database = (check: HealthCheck) => answersWhileBusy(deps.db, check);
  return [
    {
      name: "process",
      component: "api",
      async run() {
        // Answering at all proves the process is up; once draining it must leave the pool.
        if (deps.isClosing()) throw new Error("server is shutting down");
      },
    },
    database({
      name: "ping",
      component: "database",
      async run() {
        if (deps.db.closed) throw new Error("database connection is closed");
        await deps.db.query("select 1");
      },
    }),
    database(heartbeat("worker")),
    database(heartbeat("scheduler")),
    database({
      name: "backlog",
      component: "queue",
      async run() {
        const since = new Date(deps.clock.now().getTime() - STUCK_RUN_MS);
        const stuck = await deps.db.query<{ job: string }>(
          "select job from job_runs where finished_at is null and started_at < $1 order by started_at limit 5",
          [since],
        );
        if (stuck.length > 0) throw new Error(`job runs stuck for over an hour: ${stuck.map((r) => r.job).join(", ")}`);
      },
    }),
    database({
      name: "trigram-indexes",
      component: "search",
      async run() {
        const [ext] = await deps.db.query<{ ok: boolean }>("select similarity('search', 'search') = 1 as ok");
        if (!ext?.ok) throw new Error("pg_trgm similarity is not working");
        const rows = await deps.db.query<{ relname: string }>(
          `select c.relname from pg_class c join pg_index i on i.indexrelid = c.oid
            where c.relname = any($1) and i.indisvalid and pg_table_is_visible(c.oid)`,
          [SEARCH_INDEXES],
        );
        const present = new Set(rows.map((r) => r.relname));
        const missing = SEARCH_INDEXES.filter((name) => !present.has(name));
        if (missing.length > 0) throw new Error(`trigram index missing or invalid: ${missing.join(", ")}`);
      },
    }),
  ];
}
