import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";
import { type AddressPolicy, type SendResult, send } from "../../platform/webhook-sender.js";
import { closeIssue, raiseIssue } from "../issues/index.js";
import { render } from "./placeholders.js";
import { placeholderValues, postPayload, type Snapshot } from "./snapshot.js";
import { trackHealth } from "./suspension.js";

/** Spec part 8: up to 10 attempts, for up to 10 days. */
export const MAX_ATTEMPTS = 10;
const MAX_AGE_MS = 10 * 86_400_000;

export interface DeliverySettings {
  timeoutMs: number;
  retryIntervalMs: number;
  policy: AddressPolicy;
}

/** A claimed event with its webhook as it stands now (the attempt renders the current URL). */
export interface ClaimedEvent {
  id: string;
  tenant_id: string;
  webhook_id: string;
  conversion_type: string;
  snapshot: Snapshot;
  status: "Queued" | "Retrying" | "Held";
  attempts: number;
  simulated: boolean;
  counted: boolean;
  created_at: Date;
  webhook: WebhookNow;
}

export interface WebhookNow {
  name: string;
  url: string;
  method: "GET" | "POST";
  status: "Enabled" | "Disabled" | "Suspended";
  event_names: Record<string, string>;
}

/**
 * Claims up to `limit` due events with a lease. SKIP LOCKED lets several workers claim side by
 * side; an event whose lease ran out (its worker died) is due again. Held events fall due when
 * the allowance is checked again.
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
              where status in ('Queued', 'Retrying', 'Held') and next_attempt_at <= $1
                and (lease_until is null or lease_until < $1)
              order by next_attempt_at, id
              limit $4
              for update skip locked) due, outgoing_webhooks w
      where e.id = due.id and w.id = e.webhook_id
      returning e.id, e.tenant_id, e.webhook_id, e.conversion_type, e.snapshot, e.status, e.attempts, e.simulated,
                e.counted, e.created_at,
                json_build_object('name', w.name, 'url', w.url, 'method', w.method, 'status', w.status,
                                  'event_names', w.event_names) as webhook`,
    [now, new Date(now.getTime() + leaseMs), token, limit],
  );
  return { token, events };
}

/** Gives events back unsent, with a new status and due time, if this worker still holds them. */
export async function release(
  db: Queryable,
  ids: string[],
  token: string,
  status: "Paused" | "Held",
  nextAttemptAt: Date | null,
): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `update webhook_events set status = $3, next_attempt_at = $4, lease_until = null, lease_token = null
      where id = any($1::text[]) and lease_token = $2`,
    [ids, token, status, nextAttemptAt],
  );
}

/** The URL and body one attempt sends: the webhook's current template and custom event name. */
export function requestOf(event: ClaimedEvent): { url: string; body: string | null } {
  const { webhook, snapshot } = event;
  const eventName = webhook.event_names[event.conversion_type] ?? snapshot.eventName;
  return {
    url: render(webhook.url, placeholderValues(snapshot, eventName)),
    body: webhook.method === "POST" ? JSON.stringify(postPayload(snapshot, eventName)) : null,
  };
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
): Promise<"delivered" | "failed" | "stale"> {
  const { webhook } = event;
  const { url, body } = requestOf(event);
  const at = now();
  const result = await send(url, webhook.method, body, { timeoutMs: settings.timeoutMs, policy: settings.policy });
  const finished = now();
  const attempt = event.attempts + 1;
  const next = result.ok ? null : nextAttempt(event, attempt, finished, settings.retryIntervalMs);
  const status = result.ok ? "Delivered" : next === null ? "Failed" : "Retrying";
  return db.transaction(async (tx) => {
    await logAttempt(tx, event, attempt, at, body, result);
    const updated = await tx.query(
      `update webhook_events set status = $3, attempts = $4, last_attempt_at = $5, next_attempt_at = $6,
              lease_until = null, lease_token = null
        where id = $1 and lease_token = $2 returning 1`,
      [event.id, token, status, attempt, at, next],
    );
    if (updated.length === 0) return "stale";
    await trackFailure(tx, event, webhook, result, finished);
    await trackHealth(tx, event, result.ok, finished);
    return result.ok ? "delivered" : "failed";
  });
}

/** Writes one attempt of the delivery log: the URL template, never the resolved URL. */
export async function logAttempt(
  tx: Queryable,
  event: ClaimedEvent,
  attempt: number,
  at: Date,
  body: string | null,
  result: SendResult,
): Promise<void> {
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
      event.webhook.url,
      event.webhook.method,
      JSON.stringify({ headers: body === null ? {} : { "content-type": "application/json" }, body }),
      result.response === null ? null : JSON.stringify(result.response),
      result.durationMs,
      result.errorType,
      result.error,
    ],
  );
}
