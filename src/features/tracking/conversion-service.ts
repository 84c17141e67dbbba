import { prepared, type Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import { newId } from "../../platform/ids.js";
import type { ValidConversion } from "./conversion-input.js";
import { CONVERSION_COLUMNS, type ConversionRecord, type ConversionRow, toRecord } from "./conversion-record.js";
import {
  type ConversionStatus,
  DEFAULT_STATUS,
  isCounted,
  POSTBACK_ORIGIN,
  type StatusActor,
  type StatusOrigin,
  type StatusSource,
} from "./conversion-status.js";
import { attributionSourceOf, type ConversionType } from "./conversion-types.js";
import { RollupBatch } from "./rollups.js";
import { type RequestedChange, rollupKeyOf, type StatusChangeHook, writeStatusChanges } from "./status-changes.js";

const DEFAULT_CURRENCY = prepared("conversions.default-currency", "select default_currency from tenants where id = $1");

const LOAD_CLICKS = prepared(
  "conversions.clicks",
  `select id, account_id, brand_id, program_id, link_id, traffic_source_id, tracker_id, country,
            gclid, fbclid, msclkid, obclid, device, os, browser, parameter_a, parameter_b
       from clicks where tenant_id = $1 and id = any($2::text[])`,
);

const INSERT_CONVERSIONS = prepared(
  "conversions.insert",
  `insert into conversions (id, tenant_id, type, event_name, value, currency, click_id, external_id, attributed,
       attribution_source, account_id, brand_id, program_id, link_id, traffic_source_id, tracker_id, country,
       occurred_at, recorded_at, status, recorded_via, recorded_by, device, os, browser, parameter_a, parameter_b)
     select c.id, $1, c.type, c.event_name, c.value, c.currency, c.click_id, c.external_id, c.attributed,
            c.attribution_source, c.account_id, c.brand_id, c.program_id, c.link_id, c.traffic_source_id,
            c.tracker_id, c.country, c.occurred_at, $2, c.status, c.recorded_via, c.recorded_by::jsonb,
            c.device, c.os, c.browser, c.parameter_a, c.parameter_b
       from unnest($3::text[], $4::text[], $5::text[], $6::numeric[], $7::text[], $8::text[], $9::text[],
                   $10::boolean[], $11::text[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[],
                   $16::bigint[], $17::bigint[], $18::text[], $19::timestamptz[], $20::text[], $21::text[], $22::text[],
                   $23::text[], $24::text[], $25::text[], $26::text[], $27::text[])
            with ordinality as c (id, type, event_name, value, currency, click_id, external_id, attributed,
                                  attribution_source, account_id, brand_id, program_id, link_id, traffic_source_id,
                                  tracker_id, country, occurred_at, status, recorded_via, recorded_by, device, os,
                                  browser, parameter_a, parameter_b, n)
      order by c.n
     on conflict (tenant_id, external_id) where external_id is not null do nothing
     returning ${CONVERSION_COLUMNS}`,
);

// Locked: a repeat may change the status, and a change reads the status it replaces.
const FIRST_RECORDS = prepared(
  "conversions.first-records",
  `select ${CONVERSION_COLUMNS} from conversions where tenant_id = $1 and external_id = any($2::text[])
    order by id for update`,
);

/**
 * Called once per recorded batch with its new (not duplicate) conversions, in recording order,
 * inside the transaction that records them; not called when there are none.
 */
export type ConversionHook = (
  tx: Queryable,
  tenantId: string,
  conversions: readonly ConversionRecord[],
  now: Date,
) => Promise<void>;

interface ClickRow {
  id: string;
  account_id: string;
  brand_id: string;
  program_id: string;
  link_id: string;
  traffic_source_id: string;
  tracker_id: string | null;
  country: string | null;
  gclid: string | null;
  fbclid: string | null;
  msclkid: string | null;
  obclid: string | null;
  device: string | null;
  os: string | null;
  browser: string | null;
  parameter_a: string | null;
  parameter_b: string | null;
}

async function tenantDefaultCurrency(db: Queryable, tenantId: string): Promise<string> {
  const [row] = await db.query<{ default_currency: string }>(DEFAULT_CURRENCY, [tenantId]);
  return row?.default_currency ?? "USD";
}

async function loadClicks(db: Queryable, tenantId: string, clickIds: string[]): Promise<Map<string, ClickRow>> {
  if (clickIds.length === 0) return new Map();
  const rows = await db.query<ClickRow>(LOAD_CLICKS, [tenantId, clickIds]);
  return new Map(rows.map((row) => [row.id, row]));
}

export interface RecordedConversion {
  conversion: ConversionRecord;
  /** True when the externalId was seen before: this is the first record, nothing new was written. */
  duplicate: boolean;
  /** A duplicate whose status differed: the first record's status was changed to it. */
  statusChanged: boolean;
}

/** What runs in a recording's transaction: hooks of new conversions and of status changes. */
export interface RecordingHooks {
  conversions: readonly ConversionHook[];
  statusChanges: readonly StatusChangeHook[];
}

export const NO_HOOKS: RecordingHooks = { conversions: [], statusChanges: [] };

/** Writes the conversions in one statement; those whose externalId is taken are skipped. */
function insertConversions(
  tx: Queryable,
  tenantId: string,
  rows: {
    id: string;
    item: ValidConversion;
    click: ClickRow | null;
    currency: string | null;
    origin: StatusOrigin;
  }[],
  now: Date,
): Promise<ConversionRow[]> {
  const col = <T>(pick: (row: (typeof rows)[number]) => T) => rows.map(pick);
  return tx.query<ConversionRow>(INSERT_CONVERSIONS, [
    tenantId,
    now,
    col((r) => r.id),
    col((r) => r.item.type),
    col((r) => r.item.eventName),
    col((r) => r.item.value),
    col((r) => r.currency),
    col((r) => r.item.clickId),
    col((r) => r.item.externalId),
    col((r) => r.click !== null),
    col((r) => attributionSourceOf(r.click)),
    col((r) => r.click?.account_id ?? null),
    col((r) => r.click?.brand_id ?? null),
    col((r) => r.click?.program_id ?? null),
    col((r) => r.click?.link_id ?? null),
    col((r) => r.click?.traffic_source_id ?? null),
    col((r) => r.click?.tracker_id ?? null),
    col((r) => r.click?.country ?? null),
    col((r) => r.item.occurredAt.toISOString()),
    col((r) => r.item.status ?? DEFAULT_STATUS),
    col((r) => r.origin.source),
    col((r) => (r.origin.by.type === "postback" ? null : JSON.stringify(r.origin.by))),
    // The click's facts and sub-ids, which the reports break conversions down by.
    col((r) => r.click?.device ?? null),
    col((r) => r.click?.os ?? null),
    col((r) => r.click?.browser ?? null),
    col((r) => r.click?.parameter_a ?? null),
    col((r) => r.click?.parameter_b ?? null),
  ]);
}

/** The first records of these externalIds, by externalId. */
async function firstRecords(
  tx: Queryable,
  tenantId: string,
  externalIds: string[],
): Promise<Map<string, ConversionRow>> {
  if (externalIds.length === 0) return new Map();
  const rows = await tx.query<ConversionRow>(FIRST_RECORDS, [tenantId, externalIds]);
  return new Map(rows.map((row) => [row.external_id ?? "", row]));
}

/**
 * Records conversions in the caller's transaction: each is attributed to its click when the
 * tenant has it, idempotent on externalId (an item repeating an earlier one of the same batch
 * is a duplicate of it; a repeat with another status changes the first record's status), added
 * to the daily rollups when its status is counted, and handed to the hooks (outbox rows of the
 * outgoing webhooks...) in this same transaction. `origins[i]` says how item i came (postback,
 * API, dashboard) for its history; a postback when absent. Set-based: one statement per step for the whole batch
 * (clicks, insert, first records of duplicates, each hook, rollups), whatever its size.
 */
export async function recordConversions(
  tx: Queryable,
  tenantId: string,
  items: ValidConversion[],
  now: Date,
  { hooks = NO_HOOKS, origins = [] }: { hooks?: RecordingHooks; origins?: readonly StatusOrigin[] } = {},
): Promise<RecordedConversion[]> {
  const clickIds = [...new Set(items.flatMap((item) => (item.clickId === null ? [] : [item.clickId])))];
  const clicks = await loadClicks(tx, tenantId, clickIds);
  // A value sent without a currency is in the tenant's default currency (a tenant setting): a
  // network whose template has no currency macro still gets its conversion recorded.
  const needsCurrency = items.some((item) => item.value !== null && item.currency === null);
  const defaultCurrency = needsCurrency ? await tenantDefaultCurrency(tx, tenantId) : null;
  // Only the first item of an externalId is offered for insertion; the rest repeat it.
  const offered = new Set<string>();
  const originOf = (index: number): StatusOrigin => origins[index] ?? POSTBACK_ORIGIN;
  const rows = items.flatMap((item, index) => {
    if (item.externalId !== null) {
      if (offered.has(item.externalId)) return [];
      offered.add(item.externalId);
    }
    const click = item.clickId === null ? null : (clicks.get(item.clickId) ?? null);
    const currency = item.value !== null && item.currency === null ? defaultCurrency : item.currency;
    return [{ id: newId("cnv"), index, item, click, currency, origin: originOf(index) }];
  });
  const insertedRows = await insertConversions(tx, tenantId, rows, now);
  const inserted = new Map(insertedRows.map((row) => [row.id, row]));
  // By the item's place in the batch.
  const fresh = new Map<number, ConversionRow>();
  for (const row of rows) {
    const written = inserted.get(row.id);
    if (written) fresh.set(row.index, written);
  }
  const repeated = items.flatMap((item, index) => (fresh.has(index) ? [] : [item.externalId ?? ""]));
  const firsts = await firstRecords(tx, tenantId, [...new Set(repeated)]);
  // The first records of this batch, by externalId: a later item of the batch may repeat them.
  for (const row of fresh.values()) if (row.external_id !== null) firsts.set(row.external_id, row);

  const rollups = new RollupBatch();
  const requested: RequestedChange[] = [];
  // Per item: its new record, or the first record it repeats and whether it asked for a change.
  const outcomes: { row: ConversionRow; duplicate: boolean; change: boolean }[] = [];
  // The status each first record has reached so far in this batch.
  const reached = new Map<string, ConversionStatus>();
  for (const [index, item] of items.entries()) {
    const row = fresh.get(index);
    if (row !== undefined) {
      reached.set(row.id, row.status);
      if (isCounted(row.status)) {
        // A conversion without a value counts in the reports' sums as 0.
        rollups.add(rollupKeyOf(tenantId, row), { type: row.type, amount: row.value ?? "0" });
      }
      outcomes.push({ row, duplicate: false, change: false });
      continue;
    }
    const first = firsts.get(item.externalId ?? "");
    if (!first) throw new Error("conversion conflicted on externalId but the first record is missing");
    const before = reached.get(first.id) ?? first.status;
    const change = item.status !== null && item.status !== before;
    if (change && item.status !== null) {
      reached.set(first.id, item.status);
      requested.push({ row: { ...first, status: before }, status: item.status, reason: null, origin: originOf(index) });
    }
    outcomes.push({ row: first, duplicate: true, change });
  }
  const created = outcomes.filter((o) => !o.duplicate).map((o) => toRecord(o.row));
  if (created.length > 0) for (const hook of hooks.conversions) await hook(tx, tenantId, created, now);
  await writeStatusChanges(tx, tenantId, requested, now, hooks.statusChanges, rollups);
  // Last: a busy link's conversions all update one rollup row, and each holds its lock until the
  // commit. Written after everything else, the lock is held for this statement and the commit
  // only, not across the hooks' round trips, so intake on one link is not bounded by them.
  await rollups.write(tx);
  return outcomes.map(({ row, duplicate, change }) => ({
    conversion: { ...toRecord(row), status: reached.get(row.id) ?? row.status },
    duplicate,
    statusChanged: change,
  }));
}

export async function getConversion(db: Queryable, tenantId: string, id: string): Promise<ConversionRecord | null> {
  const [row] = await db.query<ConversionRow>(
    `select ${CONVERSION_COLUMNS} from conversions where tenant_id = $1 and id = $2`,
    [tenantId, id],
  );
  return row ? toRecord(row) : null;
}

/**
 * Sets one conversion's status in the caller's transaction (PATCH /conversions/{id}): kept in
 * its history, the rollups and every destination that asked told as for a postback's change.
 * Null when the tenant has no such conversion; `changed` is false when it had that status.
 */
export async function changeConversionStatus(
  tx: Queryable,
  tenantId: string,
  id: string,
  change: { status: ConversionStatus; reason: string | null; origin: StatusOrigin },
  now: Date,
  hooks: readonly StatusChangeHook[],
): Promise<{ conversion: ConversionRecord; changed: boolean } | null> {
  const [row] = await tx.query<ConversionRow>(
    `select ${CONVERSION_COLUMNS} from conversions where tenant_id = $1 and id = $2 for update`,
    [tenantId, id],
  );
  if (!row) return null;
  const rollups = new RollupBatch();
  const made = await writeStatusChanges(tx, tenantId, [{ row, ...change }], now, hooks, rollups);
  await rollups.write(tx);
  return { conversion: { ...toRecord(row), status: change.status }, changed: made.length > 0 };
}

/** One entry of a conversion's history: its recording, then each change of its status. */
export interface StatusHistoryEntry {
  at: string;
  status: ConversionStatus;
  reason: string | null;
  source: StatusSource;
  by: StatusActor;
}

interface HistoryRow {
  at: Date;
  status: ConversionStatus;
  previous_status: ConversionStatus | null;
  reason: string | null;
  source: StatusSource | null;
  by_type: StatusActor["type"] | null;
  by_id: string | null;
  by_name: string | null;
}

/**
 * A conversion's history, oldest first: the recording (with the status it was recorded with),
 * then every change. Null when the tenant has no such conversion. A conversion recorded before
 * statuses existed has no recorded origin: its first entry says postback when it came without an
 * API caller.
 */
export async function conversionHistory(
  db: Queryable,
  tenantId: string,
  id: string,
): Promise<StatusHistoryEntry[] | null> {
  const rows = await db.query<HistoryRow>(
    `select 0 as kind, c.recorded_at as at, c.status, null as previous_status, null as reason,
            c.recorded_via as source, c.recorded_by ->> 'type' as by_type, c.recorded_by ->> 'id' as by_id,
            c.recorded_by ->> 'name' as by_name, '' as id
       from conversions c where c.tenant_id = $1 and c.id = $2
     union all
     select 1, h.at, h.status, h.previous_status, h.reason, h.source, h.by_type, h.by_id, h.by_name, h.id
       from conversion_status_changes h where h.tenant_id = $1 and h.conversion_id = $2
     order by 1, 2, 10`,
    [tenantId, id],
  );
  const [recorded, ...changes] = rows;
  if (!recorded) return null;
  // The recording's status is the one the first change replaced, or the status today.
  const initial = changes[0]?.previous_status ?? recorded.status;
  const entry = (row: HistoryRow, status: ConversionStatus): StatusHistoryEntry => ({
    at: new Date(row.at).toISOString(),
    status,
    reason: row.reason,
    source: row.source ?? "postback",
    by:
      row.by_type === null || row.by_type === "postback"
        ? { type: "postback", id: null, name: null }
        : { type: row.by_type, id: row.by_id, name: row.by_name },
  });
  return [entry(recorded, initial), ...changes.map((row) => entry(row, row.status))];
}

export interface ConversionFilter {
  offset: number;
  limit: number;
  type?: readonly ConversionType[] | undefined;
  clickId?: string | undefined;
  externalId?: string | undefined;
  trafficSourceId?: readonly number[] | undefined;
  status?: readonly ConversionStatus[] | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
  /** Read the catalog items' names (the caller may read the catalog); all null otherwise. */
  names?: boolean;
}

/** The names of the catalog items a conversion names by id (null when not read, or the item is gone). */
export interface ConversionNames {
  account: string | null;
  brand: string | null;
  program: string | null;
  link: string | null;
  trafficSource: string | null;
  tracker: string | null;
}

export type ListedConversion = ConversionRecord & { names: ConversionNames };

type ListedRow = ConversionRow & {
  account_name: string | null;
  brand_name: string | null;
  program_name: string | null;
  link_name: string | null;
  traffic_source_name: string | null;
  tracker_name: string | null;
};

// Each name by primary key, for the page's rows only (at most 500): bounded, one statement.
const NAME_JOINS = [
  ["accounts", "account_id", "account_name"],
  ["brands", "brand_id", "brand_name"],
  ["programs", "program_id", "program_name"],
  ["links", "link_id", "link_name"],
  ["traffic_sources", "traffic_source_id", "traffic_source_name"],
  ["trackers", "tracker_id", "tracker_name"],
] as const;

/**
 * Newest first by occurredAt; the date range applies to occurredAt (inclusive). clickId and
 * externalId are exact matches on indexed columns (conversions_click, conversions_external_id).
 */
export async function listConversions(
  db: Queryable,
  tenantId: string,
  filter: ConversionFilter,
): Promise<{ items: ListedConversion[]; total: number }> {
  const where = new Conditions("c.tenant_id = $1", tenantId)
    .add("c.type = any($::text[])", filter.type)
    .add("c.click_id = $", filter.clickId)
    .add("c.external_id = $", filter.externalId)
    .add("c.traffic_source_id = any($::bigint[])", filter.trafficSourceId)
    .add("c.status = any($::text[])", filter.status)
    .add("c.occurred_at >= $", filter.from)
    .add("c.occurred_at <= $", filter.to);
  const columns = CONVERSION_COLUMNS.replaceAll(/(^|,\s*)/g, "$1c.");
  const named = filter.names === true;
  const { rows, total } = await selectPage<ListedRow>(
    db,
    {
      select: named
        ? `${columns}, ${NAME_JOINS.map(([table, column, as]) => `(select x.name from ${table} x where x.tenant_id = c.tenant_id and x.id = c.${column}) as ${as}`).join(", ")}`
        : columns,
      from: "conversions c",
      where: where.sql,
      params: where.params,
      orderBy: "c.occurred_at desc, c.id desc",
    },
    filter,
  );
  return {
    items: rows.map((row) => ({
      ...toRecord(row),
      names: {
        account: row.account_name ?? null,
        brand: row.brand_name ?? null,
        program: row.program_name ?? null,
        link: row.link_name ?? null,
        trafficSource: row.traffic_source_name ?? null,
        tracker: row.tracker_name ?? null,
      },
    })),
    total,
  };
}
