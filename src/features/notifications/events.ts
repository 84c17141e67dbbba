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
  "conversion.status_changed",
] as const;
export type NotificationType = (typeof NOTIFICATION_TYPES)[number];

/** Channel on which workers hear that new messages are due. */
const CHANNEL = "notification_messages";

/**
 * Writes one message per webhook of the tenant whose filter takes `type`, inside the caller's
 * transaction, so the event exists exactly when the state change that caused it commits. The
 * body is serialized once, here: every attempt sends and signs these very bytes.
 */
export function emitNotification(
  tx: Queryable,
  tenantId: string,
  type: NotificationType,
  data: Record<string, unknown>,
  now: Date,
): Promise<void> {
  return emitNotifications(tx, tenantId, type, [data], now);
}

/** One event per item of `data`, as emitNotification; three statements whatever their number. */
export async function emitNotifications(
  tx: Queryable,
  tenantId: string,
  type: NotificationType,
  data: readonly Record<string, unknown>[],
  now: Date,
): Promise<void> {
  if (data.length === 0) return;
  const webhooks = await tx.query<{ id: string }>(
    `select id from notification_webhooks
      where tenant_id = $1 and (cardinality(event_types) = 0 or $2 = any(event_types))
      order by created_at, id`,
    [tenantId, type],
  );
  if (webhooks.length === 0) return;
  const messages = data.flatMap((item) => {
    const body = JSON.stringify({ type, timestamp: now.toISOString(), data: item });
    return webhooks.map((w) => ({ id: newId("msg"), webhookId: w.id, body }));
  });
  await tx.query(
    `insert into notification_messages (id, tenant_id, webhook_id, type, body, status, next_attempt_at, created_at)
     select m.id, $1, m.webhook_id, $2, m.body, 'Queued', $3, $3
       from unnest($4::text[], $5::text[], $6::text[]) as m (id, webhook_id, body)`,
    [tenantId, type, now, messages.map((m) => m.id), messages.map((m) => m.webhookId), messages.map((m) => m.body)],
  );
  await tx.query("select pg_notify($1, $2)", [CHANNEL, tenantId]);
}

/** Calls `onMessages` whenever any node writes new messages. */
export function listenForMessages(db: Db, onMessages: () => void): Promise<() => Promise<void>> {
  return db.listen(CHANNEL, onMessages);
}
