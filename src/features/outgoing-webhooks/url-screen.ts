import type { Db, Queryable } from "../../platform/db/index.js";
import { raiseIssue } from "../issues/index.js";
import { type ClaimedEvent, logAttempts, release, requestOf } from "./delivery.js";
import { sendTimeProblems } from "./placeholders.js";
import { suspendWebhook } from "./suspension.js";

/** 'Webhook URL Is Invalid', raised on the webhook and mailed when it opens. */
async function raiseUrlIssue(
  tx: Queryable,
  event: ClaimedEvent,
  stopped: boolean,
  details: Record<string, unknown>,
  now: Date,
): Promise<void> {
  await raiseIssue(
    tx,
    {
      tenantId: event.tenant_id,
      kind: "webhook_url_invalid",
      severity: stopped ? "error" : "warning",
      title: stopped
        ? `Webhook URL Is Invalid: postbacks of ${event.webhook.name} stopped`
        : `Webhook URL Is Invalid: postbacks of ${event.webhook.name} go out with a blank value`,
      subject: { type: "outgoing_webhook", id: event.webhook_id, name: event.webhook.name },
      details: {
        postbacksStopped: stopped,
        effect: stopped ? "postbacks stopped; the webhook is suspended" : "postbacks are sent with the value blank",
        urlTemplate: event.webhook.url,
        ...details,
      },
    },
    now,
  );
}

/**
 * Sorts a claimed batch before anything is sent. Events of a webhook that is no longer Enabled
 * are paused (sent once it is enabled again). A URL saved before save-time validation that
 * cannot be sent suspends its webhook; one with a placeholder that names nothing goes out with
 * that value blank. Both raise 'Webhook URL Is Invalid'. Returns the events to send.
 */
export async function screen(db: Db, events: ClaimedEvent[], token: string, now: Date): Promise<ClaimedEvent[]> {
  const sendable: ClaimedEvent[] = [];
  const paused: string[] = [];
  const warned = new Set<string>();
  for (const event of events) {
    if (event.webhook.status !== "Enabled") {
      paused.push(event.id);
      continue;
    }
    const { url } = requestOf(event);
    const problems = sendTimeProblems(event.webhook.url, url);
    if (problems.stop !== null) {
      const reason = problems.stop;
      await db.transaction(async (tx) => {
        const held = await tx.query(
          `update webhook_events set status = 'Paused', attempts = attempts + 1, last_attempt_at = $3,
                  next_attempt_at = null, lease_until = null, lease_token = null
            where id = $1 and lease_token = $2 returning 1`,
          [event.id, token, now],
        );
        if (held.length === 0) return;
        const result = { ok: false, response: null, errorType: "invalid_url" as const, error: reason, durationMs: 0 };
        await logAttempts(tx, [
          {
            event,
            token,
            attempt: event.attempts + 1,
            at: now,
            finished: now,
            body: null,
            result,
            status: "Failed",
            next: null,
          },
        ]);
        await suspendWebhook(tx, event.tenant_id, event.webhook_id, `Suspended: the URL is invalid. ${reason}`, now);
        await raiseUrlIssue(tx, event, true, { reason }, now);
      });
      // The rest of this webhook's events are paused as the webhook now stands.
      for (const other of events) if (other.webhook_id === event.webhook_id) other.webhook.status = "Suspended";
      continue;
    }
    if (problems.blank.length > 0 && !warned.has(event.webhook_id)) {
      warned.add(event.webhook_id);
      const reason = `${problems.blank.join(", ")} ${problems.blank.length === 1 ? "names" : "name"} no value this service holds`;
      await db.transaction((tx) => raiseUrlIssue(tx, event, false, { reason, placeholders: problems.blank }, now));
    }
    sendable.push(event);
  }
  await release(db, paused, token, "Paused", null);
  return sendable;
}
