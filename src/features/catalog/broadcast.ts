import type { Db, Queryable } from "../../platform/db/index.js";

/** Channel on which every node hears that a tenant's catalog changed. */
const CHANNEL = "catalog_cache";

/** Sent inside the transaction that changes the catalog: heard by every node when it commits. */
export async function broadcastCatalogChange(db: Queryable, tenantId: string): Promise<void> {
  await db.query("select pg_notify($1, $2)", [CHANNEL, tenantId]);
}

/** Calls `onChange` with the tenant id of every catalog change, from any node. */
export function listenForCatalogChanges(db: Db, onChange: (tenantId: string) => void): Promise<() => Promise<void>> {
  return db.listen(CHANNEL, onChange);
}
