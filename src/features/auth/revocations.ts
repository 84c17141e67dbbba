import type { Db, Queryable } from "../../platform/db/index.js";
import type { ApiKeyVerifier } from "./api-key-verifier.js";

/** Channel on which every node hears that cached credentials went stale. */
const CHANNEL = "auth_cache";

type Message = { tokenId: string } | { tenantId: string };

/** Sent inside the transaction that revokes: delivered to every node when it commits. */
export async function broadcastRevoked(db: Queryable, message: Message): Promise<void> {
  await db.query("select pg_notify($1, $2)", [CHANNEL, JSON.stringify(message)]);
}

/** Drops a key (or a tenant's keys) from this node's cache as soon as any node revokes it. */
export function listenForRevocations(db: Db, verifier: ApiKeyVerifier): Promise<() => Promise<void>> {
  return db.listen(CHANNEL, (payload) => {
    let message: Partial<Record<"tokenId" | "tenantId", unknown>>;
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (typeof message.tokenId === "string") verifier.forget(message.tokenId);
    if (typeof message.tenantId === "string") verifier.forgetTenant(message.tenantId);
  });
}
