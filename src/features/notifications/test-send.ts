import type { Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import { newId } from "../../platform/ids.js";
import { redactText } from "../../platform/log-redaction.js";
import { type AddressPolicy, send } from "../../platform/webhook-sender.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { liveSecrets, type Receiver, signedHeaders } from "./delivery.js";
import { type SecretBox, SecretUnreadableError } from "./signing.js";

/** What a test message answers: whether the receiver took it, its status, and why not. */
export interface NotificationTest {
  delivered: boolean;
  status: number | null;
  error: string | null;
}

/**
 * Sends one signed message of type `test` to the webhook now, as a real one goes (its current
 * URL and live secrets, the Standard Webhooks headers, the guarded sender and its timeout), but
 * outside the delivery queue: no message or attempt is written, whatever the webhook's event
 * filter. 404 for a webhook the tenant does not have.
 */
export async function sendTestMessage(
  db: Queryable,
  tenantId: string,
  webhookId: string,
  settings: { timeoutMs: number; policy: AddressPolicy; box: SecretBox },
  at: Date,
): Promise<NotificationTest> {
  const [receiver] = await db.query<Receiver>(
    `select url, secret_enc, previous_secret_enc, previous_secret_until
       from notification_webhooks where tenant_id = $1 and id = $2`,
    [tenantId, webhookId],
  );
  if (!receiver) throw ApiError.notFound("Webhook", webhookId);
  let secrets: string[];
  try {
    secrets = liveSecrets(receiver, settings.box, at);
  } catch (error) {
    // Never sent unsigned, as real messages are not.
    if (error instanceof SecretUnreadableError) return { delivered: false, status: null, error: error.message };
    throw error;
  }
  const messageId = newId("msg");
  const body = JSON.stringify({
    type: "test",
    timestamp: at.toISOString(),
    data: { webhookId, message: "A test message sent from the dashboard or API; no event happened" },
  });
  const result = await send(receiver.url, "POST", body, {
    timeoutMs: settings.timeoutMs,
    policy: settings.policy,
    headers: signedHeaders(secrets, messageId, at, body),
  });
  return {
    delivered: result.ok,
    status: result.response?.status ?? null,
    error: result.error === null ? null : redactText(result.error),
  };
}

/** The audit entry of a test message: who sent one and whether it was taken. */
export async function auditTestMessage(
  db: Queryable,
  entry: { tenantId: string; actor: Actor; webhookId: string; result: NotificationTest; at: Date },
): Promise<void> {
  await recordAudit(db, {
    tenantId: entry.tenantId,
    actor: entry.actor,
    action: "notification_webhook.test",
    subject: { type: "notification_webhook", id: entry.webhookId },
    details: { delivered: entry.result.delivered, status: entry.result.status },
    at: entry.at,
  });
}
