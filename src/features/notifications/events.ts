import type { Db, Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";

/** Operational event types (docs/notifications.md lists each with its `data`). */
export const NOTIFICATION_TYPES = [
  "api_token.expiring",
  "api_token.expired",
  "issue.opened",
  "issue.closed",
  "outgoing_webhook.suspended",
  "outgoing_webhook.enabled",
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Channel on which workers hear that new messages are due. */
const CHANNEL = "notification_messages";

/**
 * Writes one message per webhook of the tenant whose filter takes `type`, inside the caller's
 * transaction, so the event exists exactly when the state change that caused it commits. The
 * body is serialized once, here: every attempt sends and signs these very bytes.
 */
export async function emitNotification(
  tx: Queryable,
  tenantId: string,
  type: NotificationType,
  data: Record<string, unknown>,
  now: Date,
): Promise<void> {
  const webhooks = await tx.query<{ id: string }>(
    `select id from notification_webhooks
      where tenant_id = $1 and (cardinality(event_types) = 0 or $2 = any(event_types))
      order by created_at, id`,
    [tenantId, type],
  );
  if (webhooks.length === 0) return;
  const body = JSON.stringify({ type, timestamp: now.toISOString(), data });
  await tx.query(
    `insert into notification_messages (id, tenant_id, webhook_id, type, body, status, next_attempt_at, created_at)
     select m.id, $1, m.webhook_id, $2, $3, 'Queued', $4, $4
       from unnest($5::text[], $6::text[]) as m (id, webhook_id)`,
    [tenantId, type, body, now, webhooks.map(() => newId("msg")), webhooks.map((w) => w.id)],
  );
  await tx.query("select pg_notify($1, $2)", [CHANNEL, tenantId]);
}

/** Calls `onMessages` whenever any node writes new messages. */
export function listenForMessages(db: Db, onMessages: () => void): Promise<() => Promise<void>> {
  return db.listen(CHANNEL, onMessages);
}
