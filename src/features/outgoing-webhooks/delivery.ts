import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";
import { closeIssue, raiseIssue } from "../issues/index.js";
import { render } from "./placeholders.js";
import { type AddressPolicy, type SendResult, send } from "../../platform/webhook-sender.js";
import { placeholderValues, postPayload, type Snapshot } from "./snapshot.js";

/** Spec part 8: up to 10 attempts, for up to 10 days. */
export const MAX_ATTEMPTS = 10;
const MAX_AGE_MS = 10 * 86_400_000;

export interface DeliverySettings {
  timeoutMs: number;
  retryIntervalMs: number;
  policy: AddressPolicy;
}

interface ClaimedEvent {
  id: string;
  tenant_id: string;
  webhook_id: string;
  conversion_type: string;
  snapshot: Snapshot;
  attempts: number;
  created_at: Date;
}

interface WebhookNow {
  name: string;
  url: string;
  method: "GET" | "POST";
  status: "Enabled" | "Disabled" | "Suspended";
  event_names: Record<string, string>;
}

/**
 * Claims up to `limit` due events with a lease. SKIP LOCKED lets several workers claim side by
 * side; an event whose lease ran out (its worker died) is due again.
 */
export async function claimDue(
  db: Db,
  now: Date,
  limit: number,
  leaseMs: number,
): Promise<{ token: string; events: ClaimedEvent[] }> {
  const token = randomUUID();
  const events = await db.query<ClaimedEvent>(
    `update webhook_events e set lease_until = $2, lease_token = $3
       from (select id from webhook_events
              where status in ('Queued', 'Retrying') and next_attempt_at <= $1
                and (lease_until is null or lease_until < $1)
              order by next_attempt_at, id
              limit $4
              for update skip locked) due
      where e.id = due.id
      returning e.id, e.tenant_id, e.webhook_id, e.conversion_type, e.snapshot, e.attempts, e.created_at`,
    [now, new Date(now.getTime() + leaseMs), token, limit],
  );
  return { token, events };
}

/** When a failed attempt is tried again: about one interval later (±10%), never past 10 days or 10 attempts. */
function nextAttempt(event: ClaimedEvent, attempt: number, now: Date, intervalMs: number): Date | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const next = new Date(now.getTime() + intervalMs * (0.9 + Math.random() * 0.2));
  return next.getTime() > new Date(event.created_at).getTime() + MAX_AGE_MS ? null : next;
}

/**
 * 'Outgoing Webhook Failed': one issue per webhook, opened (and mailed) on a failed attempt,
 * refreshed with the latest error type, closed by the webhook's next 2xx.
 */
async function trackFailure(
  tx: Queryable,
  event: ClaimedEvent,
  webhook: WebhookNow,
  result: SendResult,
  at: Date,
): Promise<void> {
  const subject = { type: "outgoing_webhook", id: event.webhook_id, name: webhook.name };
  const key = { tenantId: event.tenant_id, kind: "outgoing_webhook_failed" as const, subject };
  if (result.ok) {
    await closeIssue(tx, key, `A postback was answered ${result.response?.status ?? "2xx"}`, at);
    return;
  }
  await raiseIssue(
    tx,
    {
      ...key,
      severity: "error",
      title: `Outgoing Webhook Failed: ${webhook.name}`,
      details: {
        errorType: result.errorType,
        error: result.error,
        eventId: event.id,
        attempt: event.attempts + 1,
        lastFailedAt: at.toISOString(),
      },
    },
    at,
  );
}

/**
 * One attempt of one claimed event against its webhook's current URL. The outcome is written
 * only while this worker still holds the lease, so a stale worker cannot complete an event
 * another has re-claimed; the attempt itself is always logged.
 */
export async function deliver(
  db: Db,
  event: ClaimedEvent,
  token: string,
  settings: DeliverySettings,
  now: () => Date,
): Promise<"delivered" | "failed" | "paused" | "stale" | "gone"> {
  const [webhook] = await db.query<WebhookNow>(
    "select name, url, method, status, event_names from outgoing_webhooks where id = $1",
    [event.webhook_id],
  );
  if (!webhook) return "gone";
  if (webhook.status !== "Enabled") {
    // Sent once the caller enables the webhook again.
    await db.query(
      "update webhook_events set status = 'Paused', lease_until = null, lease_token = null where id = $1 and lease_token = $2",
      [event.id, token],
    );
    return "paused";
  }
  const eventName = webhook.event_names[event.conversion_type] ?? event.snapshot.eventName;
  const url = render(webhook.url, placeholderValues(event.snapshot, eventName));
  const body = webhook.method === "POST" ? JSON.stringify(postPayload(event.snapshot, eventName)) : null;
  const at = now();
  const result = await send(url, webhook.method, body, { timeoutMs: settings.timeoutMs, policy: settings.policy });
  const finished = now();
  const attempt = event.attempts + 1;
  const next = result.ok ? null : nextAttempt(event, attempt, finished, settings.retryIntervalMs);
  const status = result.ok ? "Delivered" : next === null ? "Failed" : "Retrying";
  return db.transaction(async (tx) => {
    await tx.query(
      `insert into webhook_attempts (id, event_id, tenant_id, attempt, at, url_template, method, request, response,
         duration_ms, error_type, error)
       values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12)`,
      [
        newId("att"),
        event.id,
        event.tenant_id,
        attempt,
        at,
        webhook.url,
        webhook.method,
        JSON.stringify({ headers: body === null ? {} : { "content-type": "application/json" }, body }),
        result.response === null ? null : JSON.stringify(result.response),
        result.durationMs,
        result.errorType,
        result.error,
      ],
    );
    const updated = await tx.query(
      `update webhook_events set status = $3, attempts = $4, last_attempt_at = $5, next_attempt_at = $6,
              lease_until = null, lease_token = null
        where id = $1 and lease_token = $2 returning 1`,
      [event.id, token, status, attempt, at, next],
    );
    if (updated.length === 0) return "stale";
    await trackFailure(tx, event, webhook, result, finished);
    return result.ok ? "delivered" : "failed";
  });
}
