import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "../../platform/db/index.js";
import { type FairShare, type FairTable, fairDueIds, unlimitedShare } from "../../platform/fair-claimer.js";
import { newId } from "../../platform/ids.js";
import { type AddressPolicy, type SendResult, send } from "../../platform/webhook-sender.js";
import { closeIssue, raiseIssue, subjectsWithOpenIssue } from "../issues/index.js";
import { isSteeringError, type RenderedUrl, renderUrl } from "./placeholders.js";
import { placeholderValues, postPayload, type Snapshot } from "./snapshot.js";
import { endFailingRuns, trackFailingRun } from "./suspension.js";

/** Up to 10 attempts, for up to 10 days, then Failed (docs/outgoing-webhooks.md). */
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

/** The due events, as the fair claim reads them: per tenant, and per webhook as the destination. */
const DUE_EVENTS: FairTable = {
  table: "webhook_events",
  due: "status in ('Queued', 'Retrying', 'Held') and next_attempt_at <= $1 and (lease_until is null or lease_until < $1)",
  tenant: "tenant_id",
  destination: "webhook_id",
  order: "next_attempt_at",
};

/**
 * Claims up to `limit` due events with a lease, in one statement. SKIP LOCKED lets several
 * workers claim side by side; an event whose lease ran out (its worker died) is due again. Held
 * events fall due when the allowance is checked again. `share` leaves out (or limits) the events
 * of tenants and webhooks that already have their cap of attempts under way on this worker.
 */
export async function claimDue(
  db: Db,
  now: Date,
  limit: number,
  leaseMs: number,
  share: FairShare = unlimitedShare(limit),
): Promise<{ token: string; events: ClaimedEvent[] }> {
  const token = randomUUID();
  const params: unknown[] = [now, new Date(now.getTime() + leaseMs), token];
  const ids = fairDueIds(DUE_EVENTS, share, limit, params);
  const events = await db.query<ClaimedEvent>(
    `update webhook_events e set lease_until = $2, lease_token = $3
       from (${ids}) due, outgoing_webhooks w
      where e.id = due.id and w.id = e.webhook_id
      returning e.id, e.tenant_id, e.webhook_id, e.conversion_type, e.snapshot, e.status, e.attempts, e.simulated,
                e.counted, e.created_at,
                json_build_object('name', w.name, 'url', w.url, 'method', w.method, 'status', w.status,
                                  'event_names', w.event_names) as webhook`,
    params,
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

/**
 * The URL and body one attempt sends: the webhook's current template and custom event name.
 * `steered` says why the URL must not be sent: a value would change where it goes.
 */
export function requestOf(event: ClaimedEvent): {
  url: string;
  body: string | null;
  steered: RenderedUrl["steered"];
} {
  const { webhook, snapshot } = event;
  const eventName = webhook.event_names[event.conversion_type] ?? snapshot.eventName;
  const { url, steered } = renderUrl(webhook.url, placeholderValues(snapshot, eventName));
  return {
    url,
    body: webhook.method === "POST" ? JSON.stringify(postPayload(snapshot, eventName)) : null,
    steered,
  };
}

/** When a failed attempt is tried again: about one interval later (±10%), never past 10 days or 10 attempts. */
export function nextAttempt(
  event: Pick<ClaimedEvent, "created_at">,
  attempt: number,
  now: Date,
  intervalMs: number,
): Date | null {
  if (attempt >= MAX_ATTEMPTS) return null;
  const next = new Date(now.getTime() + intervalMs * (0.9 + Math.random() * 0.2));
  return next.getTime() > new Date(event.created_at).getTime() + MAX_AGE_MS ? null : next;
}

/**
 * 'Outgoing Webhook Failed': one issue per webhook, opened (and mailed) on a failed attempt and
 * refreshed with the latest error type.
 */
async function raiseFailure(tx: Queryable, outcome: Outcome): Promise<void> {
  const { event, result, finished } = outcome;
  await raiseIssue(
    tx,
    {
      tenantId: event.tenant_id,
      kind: "outgoing_webhook_failed",
      subject: { type: "outgoing_webhook", id: event.webhook_id, name: event.webhook.name },
      severity: "error",
      title: `Outgoing Webhook Failed: ${event.webhook.name}`,
      details: {
        errorType: result.errorType,
        error: result.error,
        eventId: event.id,
        attempt: outcome.attempt,
        lastFailedAt: finished.toISOString(),
      },
    },
    finished,
  );
}

/** Closes the failure issues of webhooks that were just answered 2xx, where one is open. */
async function closeFailures(tx: Queryable, delivered: Outcome[]): Promise<void> {
  if (delivered.length === 0) return;
  const open = await subjectsWithOpenIssue(tx, "outgoing_webhook_failed", {
    type: "outgoing_webhook",
    ids: [...new Set(delivered.map((o) => o.event.webhook_id))],
  });
  for (const webhookId of open) {
    const outcome = delivered.find((o) => o.event.webhook_id === webhookId);
    if (!outcome) continue;
    await closeIssue(
      tx,
      {
        tenantId: outcome.event.tenant_id,
        kind: "outgoing_webhook_failed",
        subject: { type: "outgoing_webhook", id: webhookId },
      },
      `A delivery was answered ${outcome.result.response?.status ?? "2xx"}`,
      outcome.finished,
    );
  }
}

/** One attempt made, not yet written: what was sent, what came back and what follows. */
export interface Outcome {
  event: ClaimedEvent;
  token: string;
  attempt: number;
  at: Date;
  finished: Date;
  body: string | null;
  result: SendResult;
  status: "Delivered" | "Retrying" | "Failed";
  next: Date | null;
}

/** Makes one attempt of a claimed event against its webhook's current URL; writes nothing. */
export async function attempt(
  event: ClaimedEvent,
  token: string,
  settings: DeliverySettings,
  now: () => Date,
): Promise<Outcome> {
  const { url, body, steered } = requestOf(event);
  const at = now();
  if (steered !== null) {
    // The click's values (visitor input) would steer this delivery: it is not sent, and trying
    // again would render the same values, so it fails at once (a resend after fixing the URL
    // template tries again).
    const result: SendResult = {
      ok: false,
      response: null,
      errorType: steered.errorType,
      error: steered.message,
      durationMs: 0,
    };
    return { event, token, attempt: event.attempts + 1, at, finished: at, body, result, status: "Failed", next: null };
  }
  const result = await send(url, event.webhook.method, body, {
    timeoutMs: settings.timeoutMs,
    policy: settings.policy,
  });
  const finished = now();
  const number = event.attempts + 1;
  const next = result.ok ? null : nextAttempt(event, number, finished, settings.retryIntervalMs);
  const status = result.ok ? "Delivered" : next === null ? "Failed" : "Retrying";
  return { event, token, attempt: number, at, finished, body, result, status, next };
}

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/**
 * Writes a batch of outcomes in one transaction: every attempt is logged, but an event's new
 * status is written only while the worker still holds its lease, so a stale worker cannot
 * complete an event another has re-claimed. Returns the ids of the stale ones.
 */
export async function recordOutcomes(db: Db, outcomes: Outcome[]): Promise<Set<string>> {
  if (outcomes.length === 0) return new Set();
  return db.transaction(async (tx) => {
    await logAttempts(tx, outcomes);
    const written = await tx.query<{ id: string }>(
      `update webhook_events e set status = u.status, attempts = u.attempt, last_attempt_at = u.at,
              next_attempt_at = u.next, lease_until = null, lease_token = null
         from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::timestamptz[])
              as u (id, token, status, attempt, at, next)
        where e.id = u.id and e.lease_token = u.token
       returning e.id`,
      [
        outcomes.map((o) => o.event.id),
        outcomes.map((o) => o.token),
        outcomes.map((o) => o.status),
        outcomes.map((o) => o.attempt),
        outcomes.map((o) => iso(o.at)),
        outcomes.map((o) => iso(o.next)),
      ],
    );
    const current = new Set(written.map((r) => r.id));
    const kept = outcomes.filter((o) => current.has(o.event.id));
    for (const outcome of kept) {
      if (outcome.result.ok) continue;
      await raiseFailure(tx, outcome);
      // A refusal caused by a visitor's click values says nothing about the receiver: it does
      // not count towards suspending the webhook.
      if (!isSteeringError(outcome.result.errorType)) await trackFailingRun(tx, outcome.event, outcome.finished);
    }
    const delivered = kept.filter((o) => o.result.ok);
    await closeFailures(tx, delivered);
    await endFailingRuns(
      tx,
      delivered.filter((o) => !o.event.simulated).map((o) => o.event.webhook_id),
    );
    return new Set(outcomes.filter((o) => !current.has(o.event.id)).map((o) => o.event.id));
  });
}

/** One attempt, written at once (the worker batches; tests and tools call this). */
export async function deliver(
  db: Db,
  event: ClaimedEvent,
  token: string,
  settings: DeliverySettings,
  now: () => Date,
): Promise<"delivered" | "failed" | "stale"> {
  const outcome = await attempt(event, token, settings, now);
  const stale = await recordOutcomes(db, [outcome]);
  if (stale.has(event.id)) return "stale";
  return outcome.result.ok ? "delivered" : "failed";
}

/** Writes attempts of the delivery log: the URL template, never the resolved URL. */
export async function logAttempts(tx: Queryable, outcomes: Outcome[]): Promise<void> {
  await tx.query(
    `insert into webhook_attempts (id, event_id, tenant_id, attempt, at, url_template, method, request, response,
       duration_ms, error_type, error)
     select a.id, a.event_id, a.tenant_id, a.attempt, a.at, a.url_template, a.method, a.request::jsonb,
            a.response::jsonb, a.duration_ms, a.error_type, a.error
       from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::text[], $7::text[],
                   $8::text[], $9::text[], $10::int[], $11::text[], $12::text[])
            as a (id, event_id, tenant_id, attempt, at, url_template, method, request, response, duration_ms,
                  error_type, error)
      -- An event deleted while its attempt was under way leaves nothing behind.
      where exists (select 1 from webhook_events e where e.id = a.event_id)`,
    [
      outcomes.map(() => newId("att")),
      outcomes.map((o) => o.event.id),
      outcomes.map((o) => o.event.tenant_id),
      outcomes.map((o) => o.attempt),
      outcomes.map((o) => iso(o.at)),
      outcomes.map((o) => o.event.webhook.url),
      outcomes.map((o) => o.event.webhook.method),
      outcomes.map((o) =>
        JSON.stringify({ headers: o.body === null ? {} : { "content-type": "application/json" }, body: o.body }),
      ),
      outcomes.map((o) => (o.result.response === null ? null : JSON.stringify(o.result.response))),
      outcomes.map((o) => o.result.durationMs),
      outcomes.map((o) => o.result.errorType),
      outcomes.map((o) => o.result.error),
    ],
  );
}
