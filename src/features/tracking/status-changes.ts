import type { Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";
import { type ConversionRecord, type ConversionRow, toRecord } from "./conversion-record.js";
import { type ConversionStatus, isCounted, type StatusOrigin } from "./conversion-status.js";
import { negateAmount, type RollupBatch, type RollupKey } from "./rollups.js";

/** One change of a conversion's status, as the hooks see it: the conversion carries its new status. */
export interface StatusChange {
  conversion: ConversionRecord;
  previousStatus: ConversionStatus;
  reason: string | null;
  origin: StatusOrigin;
  at: Date;
}

/**
 * Called once per batch of status changes, in the transaction that writes them, oldest first;
 * a conversion changed twice in one batch appears twice. The outgoing webhooks, the
 * traffic-source postbacks, the operational webhooks and Google Ads register theirs in app.ts.
 */
export type StatusChangeHook = (
  tx: Queryable,
  tenantId: string,
  changes: readonly StatusChange[],
  now: Date,
) => Promise<void>;

/** A change asked for: the conversion as it stands (locked by the caller) and its new status. */
export interface RequestedChange {
  row: ConversionRow;
  status: ConversionStatus;
  reason: string | null;
  origin: StatusOrigin;
}

/** The rollup row a conversion counts in: the UTC day it occurred, its click's dimensions. */
export function rollupKeyOf(tenantId: string, row: ConversionRow): RollupKey {
  const id = (value: string | null) => (value === null ? 0 : Number(value));
  return {
    tenantId,
    day: new Date(row.occurred_at).toISOString().slice(0, 10),
    accountId: id(row.account_id),
    linkId: id(row.link_id),
    brandId: id(row.brand_id),
    programId: id(row.program_id),
    trafficSourceId: id(row.traffic_source_id),
    trackerId: id(row.tracker_id),
    country: row.country ?? "",
    device: row.device ?? "",
    os: row.os ?? "",
    browser: row.browser ?? "",
    parameterA: row.parameter_a ?? "",
    parameterB: row.parameter_b ?? "",
    currency: row.value === null ? "" : (row.currency ?? ""),
  };
}

const UPDATE_STATUSES = `update conversions c set status = u.status
   from unnest($2::text[], $3::text[]) as u (id, status)
  where c.tenant_id = $1 and c.id = u.id`;

const INSERT_HISTORY = `insert into conversion_status_changes (id, tenant_id, conversion_id, at, status, previous_status,
     reason, source, by_type, by_id, by_name)
   select h.id, $1, h.conversion_id, $2, h.status, h.previous_status, h.reason, h.source, h.by_type, h.by_id, h.by_name
     from unnest($3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[], $10::text[],
                 $11::text[]) with ordinality
          as h (id, conversion_id, status, previous_status, reason, source, by_type, by_id, by_name, n)
    order by h.n`;

/**
 * Writes the changes in the caller's transaction, in order: a change to the status a conversion
 * already has is no change and is dropped. Each change is kept in the conversion's history; one
 * that moves a conversion into or out of the counted statuses (pending, approved) adds it to or
 * takes it from the rollups of the day it occurred (into `rollups`, which the caller writes last,
 * so a closed day's blocks are rebuilt by the job rollup-blocks); then the hooks run. One
 * statement per step whatever the number of changes. Returns the changes made.
 */
export async function writeStatusChanges(
  tx: Queryable,
  tenantId: string,
  requested: readonly RequestedChange[],
  now: Date,
  hooks: readonly StatusChangeHook[],
  rollups: RollupBatch,
): Promise<StatusChange[]> {
  const current = new Map<string, ConversionStatus>();
  const made: StatusChange[] = [];
  for (const change of requested) {
    const { row } = change;
    const before = current.get(row.id) ?? row.status;
    if (before === change.status) continue;
    current.set(row.id, change.status);
    if (isCounted(before) !== isCounted(change.status)) {
      const amount = row.value ?? "0";
      const into = isCounted(change.status);
      rollups.add(rollupKeyOf(tenantId, row), {
        type: row.type,
        count: into ? 1 : -1,
        amount: into ? amount : negateAmount(amount),
      });
    }
    made.push({
      conversion: { ...toRecord(row), status: change.status },
      previousStatus: before,
      reason: change.reason,
      origin: change.origin,
      at: now,
    });
  }
  if (made.length === 0) return made;
  await tx.query(UPDATE_STATUSES, [tenantId, [...current.keys()], [...current.values()]]);
  await tx.query(INSERT_HISTORY, [
    tenantId,
    now,
    made.map(() => newId("csc")),
    made.map((c) => c.conversion.id),
    made.map((c) => c.conversion.status),
    made.map((c) => c.previousStatus),
    made.map((c) => c.reason),
    made.map((c) => c.origin.source),
    made.map((c) => c.origin.by.type),
    made.map((c) => c.origin.by.id),
    made.map((c) => c.origin.by.name),
  ]);
  for (const hook of hooks) await hook(tx, tenantId, made, now);
  return made;
}
