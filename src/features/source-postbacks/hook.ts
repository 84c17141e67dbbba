import { prepared, type Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";
import { snapshotsOf } from "../outgoing-webhooks/index.js";
import { COMMISSION_TYPES, type ConversionRecord, isCounted, type StatusChange } from "../tracking/index.js";
import { announcePostbacks } from "./queue.js";
import type { Postback } from "./schemas.js";

const CANDIDATES = prepared(
  "source-postbacks.candidates",
  `select c.id as conversion_id, k.source_click_id, s.postback
       from unnest($2::text[], $3::text[], $4::bigint[]) as c (id, click_id, source_id)
       join traffic_sources s on s.tenant_id = $1 and s.id = c.source_id
       join clicks k on k.tenant_id = $1 and k.id = c.click_id and k.traffic_source_id = c.source_id
      where s.postback is not null and (s.postback ->> 'enabled')::boolean and k.source_click_id is not null`,
);

const INSERT_POSTBACKS = prepared(
  "source-postbacks.insert",
  `insert into source_postbacks (id, tenant_id, traffic_source_id, conversion_id, click_id, conversion_type, snapshot,
       external_id, payout, status, next_attempt_at, created_at)
     select p.id, $1, p.source_id, p.conversion_id, p.click_id, p.type, p.snapshot::jsonb, p.external_id, p.payout,
            'Queued', $2, $2
       from unnest($3::text[], $4::bigint[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::numeric[])
            as p (id, source_id, conversion_id, click_id, type, snapshot, external_id, payout)`,
);

interface Candidate {
  conversion_id: string;
  source_click_id: string;
  postback: Postback;
}

/** value x payoutShare / 100, to 4 decimals; null without a value or a share. */
function payoutOf(value: number | null, share: number | null): number | null {
  if (value === null || share === null) return null;
  return Math.round(value * share * 100) / 10_000;
}

/**
 * Queues one postback per new conversion attributed to a click that carried its traffic source's
 * click id, where the source has an enabled postback whose type filter takes the conversion; in
 * the transaction that records the conversions. A conversion recorded as rejected or reversed is
 * sent only where the postback takes status changes. Returns the number queued.
 */
export function queuePostbacks(
  tx: Queryable,
  tenantId: string,
  conversions: readonly ConversionRecord[],
  now: Date,
): Promise<number> {
  return queue(tx, tenantId, conversions, now, (postback, conversion) =>
    postback.statusChanges === true ? true : isCounted(conversion.status),
  );
}

/**
 * Re-fires the postback of each changed conversion, with its new status, where the source's
 * postback takes status changes (`statusChanges`); in the transaction that changes the statuses.
 */
export function queueStatusPostbacks(
  tx: Queryable,
  tenantId: string,
  changes: readonly StatusChange[],
  now: Date,
): Promise<number> {
  return queue(
    tx,
    tenantId,
    changes.map((c) => c.conversion),
    now,
    (postback) => postback.statusChanges === true,
  );
}

/**
 * Set-based: one statement finds the sources and click ids of the whole batch, then (only when
 * some match) one reads the snapshots and one writes the postbacks.
 */
async function queue(
  tx: Queryable,
  tenantId: string,
  conversions: readonly ConversionRecord[],
  now: Date,
  takes: (postback: Postback, conversion: ConversionRecord) => boolean,
): Promise<number> {
  const eligible = conversions.filter(
    (c) =>
      c.attributed &&
      c.clickId !== null &&
      c.trafficSourceId !== null &&
      c.type !== "Click" &&
      !COMMISSION_TYPES.has(c.type),
  );
  if (eligible.length === 0) return 0;
  const candidates = await tx.query<Candidate>(CANDIDATES, [
    tenantId,
    eligible.map((c) => c.id),
    eligible.map((c) => c.clickId),
    eligible.map((c) => c.trafficSourceId),
  ]);
  if (candidates.length === 0) return 0;
  // One source (so one candidate) per conversion; a conversion may appear twice (changed twice in
  // one batch): each is sent with its own status.
  const byConversion = new Map(candidates.map((c) => [c.conversion_id, c]));
  const firing = eligible.flatMap((conversion) => {
    const candidate = byConversion.get(conversion.id);
    if (candidate === undefined) return [];
    const types = candidate.postback.conversionTypes;
    if (types.length > 0 && !types.includes(conversion.type)) return [];
    return takes(candidate.postback, conversion) ? [{ conversion, candidate }] : [];
  });
  if (firing.length === 0) return 0;
  const snapshots = await snapshotsOf(
    tx,
    tenantId,
    firing.map((f) => f.conversion),
  );
  await tx.query(INSERT_POSTBACKS, [
    tenantId,
    now,
    firing.map(() => newId("tsp")),
    firing.map((f) => f.conversion.trafficSourceId),
    firing.map((f) => f.conversion.id),
    firing.map((f) => f.conversion.clickId),
    firing.map((f) => f.conversion.type),
    firing.map((f) => JSON.stringify({ ...snapshots.get(f.conversion.id), conversionStatus: f.conversion.status })),
    firing.map((f) => f.candidate.source_click_id),
    firing.map((f) => payoutOf(f.conversion.value, f.candidate.postback.payoutShare)),
  ]);
  await announcePostbacks(tx, tenantId);
  return firing.length;
}
