import { isIP } from "node:net";
import type { Db, Queryable } from "../../platform/db/index.js";
import { type AddressPolicy, blockedHostAddresses, type Resolve } from "../../platform/webhook-sender.js";
import { raiseIssue } from "../issues/index.js";
import { type ClaimedEvent, logAttempts, release, requestOf } from "./delivery.js";
import {
  PlaceholderError,
  render,
  SAMPLE_VALUES,
  sendTimeProblems,
  type Vocabulary,
  validateTemplate,
} from "./placeholders.js";
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
        ? `Webhook URL Is Invalid: deliveries of ${event.webhook.name} stopped`
        : `Webhook URL Is Invalid: deliveries of ${event.webhook.name} go out with a blank value`,
      subject: { type: "outgoing_webhook", id: event.webhook_id, name: event.webhook.name },
      details: {
        postbacksStopped: stopped,
        effect: stopped ? "deliveries stopped; the webhook is suspended" : "deliveries are sent with the value blank",
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

/** What the save-time host check needs: the send-time policy and a bound on the DNS lookup. */
export interface HostScreen {
  policy: AddressPolicy;
  /** WEBHOOK_SAVE_DNS_TIMEOUT_MS. */
  timeoutMs: number;
  /** Replaces the system resolver (tests use one that never answers). */
  resolve?: Resolve;
}

/**
 * The host every delivery of a template goes to, or null when a placeholder decides it (or the
 * template is not a web address): rendered with every value empty and with sample values, a host
 * that a placeholder is part of comes out different.
 */
function fixedHost(template: string, vocabulary?: Vocabulary): string | null {
  try {
    const empty = new URL(render(template, {}, vocabulary)).hostname;
    const sample = render(template, vocabulary?.sample ?? SAMPLE_VALUES, vocabulary);
    return new URL(sample).hostname === empty && empty !== "" ? empty : null;
  } catch {
    return null;
  }
}

/**
 * Why a template's host will be refused at send time (a private, loopback or reserved literal
 * address, or a name that resolves only to such addresses, not on WEBHOOK_ALLOWED_HOSTS), or
 * null. Saving it would only make every delivery fail with blocked_address and an issue. A
 * template with other problems answers null: `validateTemplate` reports those.
 */
export async function blockedHostProblem(
  template: string,
  screen: HostScreen,
  vocabulary?: Vocabulary,
): Promise<string | null> {
  try {
    validateTemplate(template, vocabulary);
  } catch (error) {
    if (error instanceof PlaceholderError) return null;
    throw error;
  }
  const host = fixedHost(template, vocabulary);
  if (host === null) return null;
  const blocked = await blockedHostAddresses(host, screen);
  if (blocked === null) return null;
  const what = isIP(host.replace(/^\[|\]$/g, "")) !== 0 ? "is a" : "resolves only to";
  const range = what === "is a" ? "private, loopback or reserved address" : "private, loopback or reserved addresses";
  return (
    `URL host ${host} ${what} ${range}: deliveries to it would be refused. ` +
    `To deliver inside your own network, add ${host.replace(/^\[|\]$/g, "")} to WEBHOOK_ALLOWED_HOSTS`
  );
}
