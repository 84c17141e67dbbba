import type { Db, Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";
import { COMMISSION_TYPES, type ConversionRecord, type ConversionType } from "../tracking/index.js";
import { snapshotOf } from "./snapshot.js";

/** Channel on which workers hear that new delivery events are due. */
const CHANNEL = "webhook_events";

interface Candidate {
  id: string;
  status: "Enabled" | "Suspended";
  conversion_types: string[];
  attribution_sources: string[];
  click_webhooks: boolean | null;
}

/** Whether a webhook fires for a conversion: its type and attribution filters (spec 6). */
function matches(webhook: Candidate, type: ConversionType, source: string): boolean {
  // Commissions are calculated and never fire; Click only where the tenant turned click webhooks on.
  if (COMMISSION_TYPES.has(type)) return false;
  if (type === "Click" && webhook.click_webhooks !== true) return false;
  if (webhook.conversion_types.length > 0 && !webhook.conversion_types.includes(type)) return false;
  return webhook.attribution_sources.length === 0 || webhook.attribution_sources.includes(source);
}

/**
 * Writes one delivery event per matching webhook, in the transaction that records the
 * conversion: affiliate-level webhooks for every conversion, source-level ones for their source
 * (both when both match). Disabled webhooks create nothing; Suspended ones create Paused events.
 */
export async function fanOut(
  tx: Queryable,
  tenantId: string,
  conversion: ConversionRecord,
  now: Date,
): Promise<number> {
  if (COMMISSION_TYPES.has(conversion.type)) return 0;
  const candidates = await tx.query<Candidate>(
    `select w.id, w.status, w.conversion_types, w.attribution_sources,
            (t.entitlements ->> 'clickWebhooks')::boolean as click_webhooks
       from outgoing_webhooks w join tenants t on t.id = w.tenant_id
      where w.tenant_id = $1 and w.status <> 'Disabled'
        and (w.traffic_source_id is null or w.traffic_source_id = $2)
      order by w.created_at, w.id`,
    [tenantId, conversion.trafficSourceId],
  );
  const firing = candidates.filter((w) => matches(w, conversion.type, conversion.attributionSource));
  if (firing.length === 0) return 0;
  const snapshot = JSON.stringify(await snapshotOf(tx, tenantId, conversion));
  await tx.query(
    `insert into webhook_events (id, tenant_id, webhook_id, conversion_id, click_id, conversion_type, snapshot, status,
       next_attempt_at, created_at)
     select e.id, $1, e.webhook_id, $2, $3, $4, $5::jsonb, e.status, $6, $6
       from unnest($7::text[], $8::text[], $9::text[]) as e (id, webhook_id, status)`,
    [
      tenantId,
      conversion.id,
      conversion.clickId,
      conversion.type,
      snapshot,
      now,
      firing.map(() => newId("evt")),
      firing.map((w) => w.id),
      firing.map((w) => (w.status === "Enabled" ? "Queued" : "Paused")),
    ],
  );
  await announceEvents(tx, tenantId);
  return firing.length;
}

/** Wakes every node's workers once the caller's transaction commits: they claim due events at once. */
export async function announceEvents(tx: Queryable, tenantId: string): Promise<void> {
  await tx.query("select pg_notify($1, $2)", [CHANNEL, tenantId]);
}

/** Calls `onEvents` whenever any node records new delivery events. */
export function listenForEvents(db: Db, onEvents: () => void): Promise<() => Promise<void>> {
  return db.listen(CHANNEL, onEvents);
}
