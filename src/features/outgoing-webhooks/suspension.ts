import type { Queryable } from "../../platform/db/index.js";
import { emitNotification } from "../notifications/index.js";
import type { ClaimedEvent } from "./delivery.js";

/** A webhook that got nothing but failures for this long is suspended. */
const FAILING_MS_TO_SUSPEND = 5 * 86_400_000;

/**
 * Suspends an Enabled webhook and says why; it sends nothing until the caller enables it again.
 * Returns false when it was not Enabled (already suspended, or disabled by the caller).
 */
export async function suspendWebhook(
  tx: Queryable,
  tenantId: string,
  webhookId: string,
  reason: string,
  now: Date,
): Promise<boolean> {
  const [row] = await tx.query<{ id: string; name: string; status: string; status_reason: string }>(
    `update outgoing_webhooks set status = 'Suspended', status_reason = $3, updated_at = $4
      where tenant_id = $1 and id = $2 and status = 'Enabled' returning id, name, status, status_reason`,
    [tenantId, webhookId, reason, now],
  );
  if (!row) return false;
  await emitNotification(
    tx,
    tenantId,
    "outgoing_webhook.suspended",
    { id: row.id, name: row.name, status: row.status, statusReason: row.status_reason },
    now,
  );
  return true;
}

/** A 2xx ends the webhooks' runs of failures. */
export async function endFailingRuns(tx: Queryable, webhookIds: string[]): Promise<void> {
  if (webhookIds.length === 0) return;
  await tx.query(
    "update outgoing_webhooks set failing_since = null where id = any($1::text[]) and failing_since is not null",
    [[...new Set(webhookIds)]],
  );
}

/**
 * A failure starts the webhook's run of failures or, once the run has lasted five days,
 * suspends the webhook. Simulated events are tests and do not count.
 */
export async function trackFailingRun(tx: Queryable, event: ClaimedEvent, at: Date): Promise<void> {
  if (event.simulated) return;
  const [row] = await tx.query<{ failing_since: Date }>(
    "update outgoing_webhooks set failing_since = coalesce(failing_since, $2) where id = $1 returning failing_since",
    [event.webhook_id, at],
  );
  if (!row) return;
  const since = new Date(row.failing_since);
  if (at.getTime() - since.getTime() < FAILING_MS_TO_SUSPEND) return;
  await suspendWebhook(
    tx,
    event.tenant_id,
    event.webhook_id,
    `Suspended: nothing but failed deliveries since ${since.toISOString()} (5 days)`,
    at,
  );
}
