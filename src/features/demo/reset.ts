import type { Db, Queryable } from "../../platform/db/index.js";
import { HEARTBEAT_STALE_MS } from "../../platform/heartbeat.js";
import { DEMO_TENANT } from "./seed.js";

export interface DemoResetResult {
  /** The demo tenant removed, or null when there was none. */
  tenantId: string | null;
  /** Rows removed by statement per table; what the tenant's row cascaded to is not counted. */
  rows: Record<string, number>;
}

/** Something that looks like a running service uses the database: nothing was removed. */
export class ServiceRunningError extends Error {
  constructor(nodes: number) {
    super(
      `${nodes} worker or scheduler node(s) wrote a heartbeat in the last ${HEARTBEAT_STALE_MS / 1000} s: ` +
        "the service is running. Stop it, then run npm run demo:reset again.",
    );
    this.name = "ServiceRunningError";
  }
}

interface TableRow {
  table_name: string;
}

/** Tables of the current schema holding a column; listed, not hard-coded, so new tables are covered. */
async function tablesWith(db: Queryable, column: string): Promise<Set<string>> {
  const rows = await db.query<TableRow>(
    `select c.table_name from information_schema.columns c
       join information_schema.tables t on t.table_schema = c.table_schema and t.table_name = c.table_name
      where c.table_schema = current_schema() and c.column_name = $1 and t.table_type = 'BASE TABLE'`,
    [column],
  );
  return new Set(rows.map((r) => r.table_name));
}

const quoted = (name: string) => `"${name.replace(/"/g, '""')}"`;

/**
 * Removes the demo tenant and every row that belongs to it, in one transaction, so that the next
 * start seeds a new one (with a new login, keys and postback URL, printed once). Other tenants are
 * not touched. Refuses while worker or scheduler nodes beat on this database (on the embedded
 * database the data-directory lock already refuses to open it while the service runs).
 */
export async function removeDemoTenant(db: Db, now: Date): Promise<DemoResetResult> {
  const [beating] = await db.query<{ n: number }>(
    "select count(*)::int as n from node_heartbeats where last_seen_at > $1",
    [new Date(now.getTime() - HEARTBEAT_STALE_MS)],
  );
  if (beating && beating.n > 0) throw new ServiceRunningError(beating.n);
  return db.transaction(async (tx) => {
    const [tenant] = await tx.query<{ id: string }>("select id from tenants where name = $1 for update", [DEMO_TENANT]);
    if (!tenant) return { tenantId: null, rows: {} };
    const rows: Record<string, number> = {};
    const count = async (table: string, sql: string) => {
      const removed = await tx.query<{ n: number }>(
        `with gone as (${sql} returning 1) select count(*)::int as n from gone`,
        [tenant.id],
      );
      const n = removed[0]?.n ?? 0;
      if (n > 0) rows[table] = (rows[table] ?? 0) + n;
    };
    const byTenant = await tablesWith(tx, "tenant_id");
    // Rows keyed by the tenant's links only (unique-visitor marks), before the links go.
    if (byTenant.has("links")) {
      for (const table of await tablesWith(tx, "link_id")) {
        if (byTenant.has(table)) continue;
        await count(table, `delete from ${quoted(table)} where link_id in (select id from links where tenant_id = $1)`);
      }
    }
    // The tenant's row first: its foreign keys cascade in one statement, so the catalog's own
    // references (links to accounts and brands) are checked only once all of them are gone.
    await count("tenants", "delete from tenants where id = $1");
    // Then what has a tenant_id without a foreign key (raw events, usage, attempts).
    for (const table of byTenant) {
      await count(table, `delete from ${quoted(table)} where tenant_id = $1`);
    }
    return { tenantId: tenant.id, rows };
  });
}
