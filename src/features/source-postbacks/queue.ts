import { type Db, prepared, type Queryable } from "../../platform/db/index.js";

const ANNOUNCE = prepared("source-postbacks.announce", "select pg_notify($1, $2)");

/** Channel on which workers hear that postbacks are due. */
const CHANNEL = "source_postbacks";

/** Wakes every node's postback workers once the caller's transaction commits. */
export async function announcePostbacks(tx: Queryable, tenantId: string): Promise<void> {
  await tx.query(ANNOUNCE, [CHANNEL, tenantId]);
}

/** Calls `onDue` whenever any node queues postbacks. */
export function listenForPostbacks(db: Db, onDue: () => void): Promise<() => Promise<void>> {
  return db.listen(CHANNEL, onDue);
}
