import type { Db, Queryable } from "../../platform/db/index.js";
import type { RetentionRule } from "../../platform/retention.js";
import type { ApiKeyVerifier } from "./api-key-verifier.js";
import type { SignedInPeople } from "./signed-in-people.js";

/** Channel on which every node hears that cached credentials went stale. */
const CHANNEL = "auth_cache";

/**
 * A key deleted, a person disabled or changed, a tenant's entitlements changed, or a dashboard
 * token signed out (`sessionId`: the SHA-256 of the token, as revoked_sessions stores it).
 */
type Message = { tokenId: string } | { userId: string } | { tenantId: string } | { sessionId: string };

/** Sent inside the transaction that revokes: delivered to every node when it commits. */
export async function broadcastRevoked(db: Queryable, message: Message): Promise<void> {
  await db.query("select pg_notify($1, $2)", [CHANNEL, JSON.stringify(message)]);
}

/** What a node caches of its callers: its API keys and its signed-in people. */
export interface CredentialCaches {
  apiKeys: ApiKeyVerifier;
  people: SignedInPeople;
}

/**
 * Drops a key, a person, a signed-out token or a tenant's keys and people from this node's caches
 * as soon as any node says so.
 */
export function listenForRevocations(db: Db, caches: CredentialCaches): Promise<() => Promise<void>> {
  return db.listen(CHANNEL, (payload) => {
    let message: Partial<Record<"tokenId" | "userId" | "tenantId" | "sessionId", unknown>>;
    try {
      message = JSON.parse(payload) as typeof message;
    } catch {
      return;
    }
    if (typeof message.tokenId === "string") caches.apiKeys.forget(message.tokenId);
    if (typeof message.userId === "string") caches.people.forget(message.userId);
    if (typeof message.sessionId === "string") caches.people.forgetSession(message.sessionId);
    if (typeof message.tenantId === "string") {
      caches.apiKeys.forgetTenant(message.tenantId);
      caches.people.forgetTenant(message.tenantId);
    }
  });
}

/** A signed-out token is listed until it would have expired anyway; then it is refused as expired. */
export const AUTH_RETENTION: RetentionRule[] = [{ table: "revoked_sessions", column: "expires_at", days: 0 }];
