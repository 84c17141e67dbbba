import { prepared, type Queryable } from "../../platform/db/index.js";
import { type ConversionHook, type ConversionRecord, isCounted } from "../tracking/index.js";

const INSERT_ITEMS = prepared(
  "google-ads.queue",
  `insert into google_ads_items (conversion_id, tenant_id, traffic_source_id, conversion_type, gclid, click_at,
       occurred_at, value, currency, created_at)
     select c.id, $1, i.traffic_source_id, c.type, k.gclid, k.at, c.occurred_at, c.value, c.currency, $2
       from unnest($3::text[], $4::text[], $5::bigint[], $6::text[], $7::timestamptz[], $8::numeric[], $9::text[])
              as c (id, click_id, traffic_source_id, type, occurred_at, value, currency)
       join google_ads_integrations i
         on i.tenant_id = $1 and i.traffic_source_id = c.traffic_source_id and i.enabled
        and (i.conversion_actions ->> c.type) is not null
       join clicks k on k.tenant_id = $1 and k.id = c.click_id and k.gclid is not null and k.gclid <> ''
     on conflict (conversion_id) do nothing
     returning conversion_id`,
);

/**
 * Queues the conversions Google Ads should hear of, in the transaction that records them: those
 * of a traffic source with an enabled integration that maps their type to a conversion action,
 * whose click carried a gclid, and whose status is pending or approved (one recorded rejected or
 * reversed is not uploaded; the status hook queues it if it is approved later). Set-based: one
 * statement for the whole batch, and none at all when no conversion of the batch has a click
 * with a gclid.
 */
export async function queueGoogleAdsItems(
  tx: Queryable,
  tenantId: string,
  conversions: readonly ConversionRecord[],
  now: Date,
): Promise<number> {
  // A conversion's attribution source is "google" exactly when its click carried a gclid, so a
  // batch without one costs no statement.
  const candidates = conversions.filter(
    (c) => c.clickId !== null && c.trafficSourceId !== null && c.attributionSource === "google" && isCounted(c.status),
  );
  if (candidates.length === 0) return 0;
  const rows = await tx.query(INSERT_ITEMS, [
    tenantId,
    now,
    candidates.map((c) => c.id),
    candidates.map((c) => c.clickId),
    candidates.map((c) => c.trafficSourceId),
    candidates.map((c) => c.type),
    candidates.map((c) => c.occurredAt),
    candidates.map((c) => c.value),
    candidates.map((c) => c.currency),
  ]);
  return rows.length;
}

/** The conversion hook app.ts registers. */
export const googleAdsQueue: ConversionHook = (tx, tenantId, conversions, now) =>
  queueGoogleAdsItems(tx, tenantId, conversions, now).then(() => undefined);
