import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "./clock.js";
import type { Db } from "./db/index.js";

export type BackgroundRole = "worker" | "scheduler";

export const HEARTBEAT_INTERVAL_MS = 10_000;
/** A role whose newest heartbeat is older than this counts as absent. */
export const HEARTBEAT_STALE_MS = 45_000;

async function beat(db: Db, nodeId: string, roles: BackgroundRole[], at: Date, startedAt: Date): Promise<void> {
  for (const role of roles) {
    await db.query(
      `insert into node_heartbeats (node_id, role, started_at, last_seen_at) values ($1, $2, $3, $4)
       on conflict (node_id, role) do update set last_seen_at = excluded.last_seen_at`,
      [nodeId, role, startedAt, at],
    );
  }
}

/** Writes this node's heartbeat for its background roles now and every 10 s until stopped. */
export async function startHeartbeat(deps: {
  db: Db;
  clock: Clock;
  nodeId: string;
  roles: BackgroundRole[];
  log: FastifyBaseLogger;
}): Promise<{ stop(): Promise<void> }> {
  const startedAt = deps.clock.now();
  await beat(deps.db, deps.nodeId, deps.roles, startedAt, startedAt);
  const timer = setInterval(() => {
    beat(deps.db, deps.nodeId, deps.roles, deps.clock.now(), startedAt).catch((error: unknown) =>
      deps.log.warn({ err: error }, "heartbeat failed"),
    );
  }, HEARTBEAT_INTERVAL_MS);
  timer.unref();
  return {
    async stop() {
      clearInterval(timer);
      // Leaving at once, rather than going stale, lets health see a clean stop.
      await deps.db.query("delete from node_heartbeats where node_id = $1", [deps.nodeId]).catch(() => undefined);
    },
  };
}
