import { randomUUID } from "node:crypto";
import type { Db } from "../../platform/db/index.js";
import { type FairShare, type FairTable, fairDueIds, unlimitedShare } from "../../platform/fair-claimer.js";
import { newId } from "../../platform/ids.js";
import { type AddressPolicy, type SendResult, send } from "../../platform/webhook-sender.js";
import { type SecretBox, SecretUnreadableError, signatureHeader } from "./signing.js";

export interface NotificationSettings {
  timeoutMs: number;
  /** Seconds to wait before each retry; its length is the number of retries (NOTIFICATION_RETRY_SCHEDULE: five). */
  retryScheduleS: readonly number[];
  policy: AddressPolicy;
  box: SecretBox;
}

export interface ClaimedMessage {
  id: string;
  tenant_id: string;
  webhook_id: string;
  body: string;
  attempts: number;
}

export interface Receiver {
  url: string;
  secret_enc: string;
  previous_secret_enc: string | null;
  previous_secret_until: Date | null;
}

/** The due messages, as the fair claim reads them: per tenant, and per operational webhook as the destination. */
const DUE_MESSAGES: FairTable = {
  table: "notification_messages",
  due: "status in ('Queued', 'Retrying') and next_attempt_at <= $1 and (lease_until is null or lease_until < $1)",
  tenant: "tenant_id",
  destination: "webhook_id",
  order: "next_attempt_at",
};

/**
 * Claims up to `limit` due messages with a lease, in one statement. SKIP LOCKED lets several
 * workers claim side by side; a message whose lease ran out (its worker died) is due again.
 * `share` passes over the messages of tenants and webhooks that already have their cap of
 * attempts under way on this worker.
 */
export async function claimDue(
  db: Db,
  now: Date,
  limit: number,
  leaseMs: number,
  share: FairShare = unlimitedShare(limit),
): Promise<{ token: string; messages: ClaimedMessage[] }> {
  const token = randomUUID();
  const params: unknown[] = [now, new Date(now.getTime() + leaseMs), token];
  const ids = fairDueIds(DUE_MESSAGES, share, limit, params);
  const messages = await db.query<ClaimedMessage>(
    `update notification_messages m set lease_until = $2, lease_token = $3
       from (${ids}) due
      where m.id = due.id
      returning m.id, m.tenant_id, m.webhook_id, m.body, m.attempts`,
    params,
  );
  return { token, messages };
}

/** The secrets that sign at `at`: the current one, and the rotated-out one during its overlap. */
export function liveSecrets(receiver: Receiver, box: SecretBox, at: Date): string[] {
  const secrets = [box.open(receiver.secret_enc)];
  const until = receiver.previous_secret_until;
  if (receiver.previous_secret_enc !== null && until !== null && new Date(until) > at) {
    // A rotated-out secret that cannot be read only loses its overlap; the new one still signs.
    try {
      secrets.push(box.open(receiver.previous_secret_enc));
    } catch (error) {
      if (!(error instanceof SecretUnreadableError)) throw error;
    }
  }
  return secrets;
}

/**
 * The Standard Webhooks headers. The signature goes out under the service's own name
 * (Service-Webhook-Signature, docs/notifications.md) and under `webhook-signature`, the name the Standard Webhooks
 * verifier libraries read, so those libraries verify a message unchanged.
 */
export function signedHeaders(secrets: readonly string[], messageId: string, at: Date, body: string) {
  const timestamp = Math.floor(at.getTime() / 1000);
  const signature = signatureHeader(secrets, messageId, timestamp, body);
  return {
    "webhook-id": messageId,
    "webhook-timestamp": String(timestamp),
    "webhook-signature": signature,
    "service-webhook-signature": signature,
  };
}

type AttemptResult = Omit<SendResult, "errorType"> & { errorType: SendResult["errorType"] | "secret_unreadable" };

async function attempt(receiver: Receiver, message: ClaimedMessage, settings: NotificationSettings, at: Date) {
  let secrets: string[];
  try {
    secrets = liveSecrets(receiver, settings.box, at);
  } catch (error) {
    if (!(error instanceof SecretUnreadableError)) throw error;
    // Never send unsigned: the receiver could not tell it from a forgery.
    return { ok: false, response: null, errorType: "secret_unreadable", error: error.message, durationMs: 0 } as const;
  }
  return send(receiver.url, "POST", message.body, {
    timeoutMs: settings.timeoutMs,
    policy: settings.policy,
    headers: signedHeaders(secrets, message.id, at, message.body),
  });
}

/**
 * One attempt of one claimed message to its webhook's current URL, signed with its current
 * secrets. The outcome is written only while this worker still holds the lease, so a stale
 * worker cannot complete a message another has re-claimed; the attempt itself is logged either
 * way (the request did go out), unless the webhook and its messages were deleted meanwhile.
 */
export async function deliver(
  db: Db,
  message: ClaimedMessage,
  token: string,
  settings: NotificationSettings,
  now: () => Date,
): Promise<"delivered" | "retrying" | "failed" | "stale" | "gone"> {
  const [receiver] = await db.query<Receiver>(
    "select url, secret_enc, previous_secret_enc, previous_secret_until from notification_webhooks where id = $1",
    [message.webhook_id],
  );
  if (!receiver) return "gone";
  const at = now();
  const result: AttemptResult = await attempt(receiver, message, settings, at);
  const finished = now();
  const number = message.attempts + 1;
  // Retry n waits the n-th interval of the schedule; after the last one the message has failed.
  const wait = result.ok ? undefined : settings.retryScheduleS[number - 1];
  const next = wait === undefined ? null : new Date(finished.getTime() + wait * 1000);
  const status = result.ok ? "Delivered" : next === null ? "Failed" : "Retrying";
  return db.transaction(async (tx) => {
    await tx.query(
      `insert into notification_attempts (id, message_id, tenant_id, attempt, at, response_status, response_body,
         duration_ms, error_type, error)
       select $1, $2, $3, $4, $5, $6, $7, $8, $9, $10
        where exists (select 1 from notification_messages where id = $2)`,
      [
        newId("att"),
        message.id,
        message.tenant_id,
        number,
        at,
        result.response?.status ?? null,
        result.response?.body ?? null,
        result.durationMs,
        result.errorType,
        result.error,
      ],
    );
    const updated = await tx.query(
      `update notification_messages set status = $3, attempts = $4, last_attempt_at = $5, next_attempt_at = $6,
              lease_until = null, lease_token = null
        where id = $1 and lease_token = $2 returning 1`,
      [message.id, token, status, number, at, next],
    );
    if (updated.length === 0) return "stale";
    return result.ok ? "delivered" : next === null ? "failed" : "retrying";
  });
}
