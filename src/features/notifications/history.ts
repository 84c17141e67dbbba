import type { Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import type { NotificationType } from "./events.js";

export const MESSAGE_STATUSES = ["Queued", "Retrying", "Delivered", "Failed"] as const;
type MessageStatus = (typeof MESSAGE_STATUSES)[number];

export interface DeliveryAttempt {
  id: string;
  attempt: number;
  at: string;
  status: "succeeded" | "failed";
  responseStatus: number | null;
  responseBody: string | null;
  durationMs: number;
  errorType: string | null;
  error: string | null;
}

export interface Delivery {
  id: string;
  type: NotificationType;
  status: MessageStatus;
  payload: { type: NotificationType; timestamp: string; data: Record<string, unknown> };
  attemptCount: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  attempts: DeliveryAttempt[];
}

interface MessageRow {
  id: string;
  type: NotificationType;
  status: MessageStatus;
  body: string;
  attempts: number;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
}

interface AttemptRow {
  id: string;
  message_id: string;
  attempt: number;
  at: Date;
  response_status: number | null;
  response_body: string | null;
  duration_ms: number;
  error_type: string | null;
  error: string | null;
}

const iso = (value: Date | null) => (value === null ? null : new Date(value).toISOString());

function toAttempt(row: AttemptRow): DeliveryAttempt {
  return {
    id: row.id,
    attempt: row.attempt,
    at: new Date(row.at).toISOString(),
    status: row.error_type === null ? "succeeded" : "failed",
    responseStatus: row.response_status,
    responseBody: row.response_body,
    durationMs: row.duration_ms,
    errorType: row.error_type,
    error: row.error,
  };
}

/** A webhook's messages, newest first, each with its attempts oldest first. */
export async function listDeliveries(
  db: Queryable,
  tenantId: string,
  webhookId: string,
  query: { offset: number; limit: number; status?: MessageStatus | undefined; type?: NotificationType | undefined },
): Promise<{ items: Delivery[]; total: number }> {
  const where = new Conditions("tenant_id = $1 and webhook_id = $2", tenantId, webhookId)
    .add("status = $", query.status)
    .add("type = $", query.type);
  const { rows, total } = await selectPage<MessageRow>(
    db,
    {
      select: "id, type, status, body, attempts, last_attempt_at, next_attempt_at, created_at",
      from: "notification_messages",
      where: where.sql,
      params: where.params,
      orderBy: "created_at desc, id desc",
    },
    query,
  );
  const attempts =
    rows.length === 0
      ? []
      : await db.query<AttemptRow>(
          `select id, message_id, attempt, at, response_status, response_body, duration_ms, error_type, error
             from notification_attempts where message_id = any($1::text[]) order by message_id, attempt, at, id`,
          [rows.map((r) => r.id)],
        );
  // Node 20 has no Map.groupBy.
  const byMessage = new Map<string, AttemptRow[]>();
  for (const row of attempts) byMessage.set(row.message_id, [...(byMessage.get(row.message_id) ?? []), row]);
  const items = rows.map((row) => ({
    id: row.id,
    type: row.type,
    status: row.status,
    payload: JSON.parse(row.body) as Delivery["payload"],
    attemptCount: row.attempts,
    lastAttemptAt: iso(row.last_attempt_at),
    nextAttemptAt: iso(row.next_attempt_at),
    createdAt: new Date(row.created_at).toISOString(),
    attempts: (byMessage.get(row.id) ?? []).map(toAttempt),
  }));
  return { items, total };
}
