import { prepared, type Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import { newId } from "../../platform/ids.js";
import type { ValidConversion } from "./conversion-input.js";
import { type AttributionSource, attributionSourceOf, type ConversionType } from "./conversion-types.js";
import { RollupBatch } from "./rollups.js";

const DEFAULT_CURRENCY = prepared("conversions.default-currency", "select default_currency from tenants where id = $1");

const LOAD_CLICKS = prepared(
  "conversions.clicks",
  `select id, account_id, brand_id, program_id, link_id, traffic_source_id, tracker_id, country,
            gclid, fbclid, msclkid, obclid
       from clicks where tenant_id = $1 and id = any($2::text[])`,
);

/**
 * A conversion row's columns, named rather than `*`: a prepared statement's result may not change
 * shape, so a column added by a newer node's migration must not reach an older node's statements.
 */
const COLUMNS = `id, type, event_name, value, currency, click_id, external_id, attributed, attribution_source,
  account_id, brand_id, program_id, link_id, traffic_source_id, tracker_id, occurred_at, recorded_at`;

const INSERT_CONVERSIONS = prepared(
  "conversions.insert",
  `insert into conversions (id, tenant_id, type, event_name, value, currency, click_id, external_id, attributed,
       attribution_source, account_id, brand_id, program_id, link_id, traffic_source_id, tracker_id, country,
       occurred_at, recorded_at)
     select c.id, $1, c.type, c.event_name, c.value, c.currency, c.click_id, c.external_id, c.attributed,
            c.attribution_source, c.account_id, c.brand_id, c.program_id, c.link_id, c.traffic_source_id,
            c.tracker_id, c.country, c.occurred_at, $2
       from unnest($3::text[], $4::text[], $5::text[], $6::numeric[], $7::text[], $8::text[], $9::text[],
                   $10::boolean[], $11::text[], $12::bigint[], $13::bigint[], $14::bigint[], $15::bigint[],
                   $16::bigint[], $17::bigint[], $18::text[], $19::timestamptz[])
            with ordinality as c (id, type, event_name, value, currency, click_id, external_id, attributed,
                                  attribution_source, account_id, brand_id, program_id, link_id, traffic_source_id,
                                  tracker_id, country, occurred_at, n)
      order by c.n
     on conflict (tenant_id, external_id) where external_id is not null do nothing
     returning ${COLUMNS}`,
);

const FIRST_RECORDS = prepared(
  "conversions.first-records",
  `select ${COLUMNS} from conversions where tenant_id = $1 and external_id = any($2::text[])`,
);

export interface ConversionRecord {
  id: string;
  type: ConversionType;
  eventName: string;
  /** Null when the conversion was recorded without a value. */
  value: number | null;
  currency: string | null;
  clickId: string | null;
  externalId: string | null;
  attributed: boolean;
  attributionSource: AttributionSource;
  accountId: number | null;
  brandId: number | null;
  programId: number | null;
  linkId: number | null;
  trafficSourceId: number | null;
  trackerId: number | null;
  occurredAt: string;
  recordedAt: string;
}

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
}

interface ConversionRow {
  id: string;
  type: ConversionType;
  event_name: string;
  value: string | null;
  currency: string | null;
  click_id: string | null;
  external_id: string | null;
  attributed: boolean;
  attribution_source: AttributionSource;
  account_id: string | null;
  brand_id: string | null;
  program_id: string | null;
  link_id: string | null;
  traffic_source_id: string | null;
  tracker_id: string | null;
  occurred_at: Date;
  recorded_at: Date;
}

const idOrNull = (value: string | null): number | null => (value === null ? null : Number(value));

function toRecord(row: ConversionRow): ConversionRecord {
  return {
    id: row.id,
    type: row.type,
    eventName: row.event_name,
    value: row.value === null ? null : Number(row.value),
    currency: row.currency,
    clickId: row.click_id,
    externalId: row.external_id,
    attributed: row.attributed,
    attributionSource: row.attribution_source,
    accountId: idOrNull(row.account_id),
    brandId: idOrNull(row.brand_id),
    programId: idOrNull(row.program_id),
    linkId: idOrNull(row.link_id),
    trafficSourceId: idOrNull(row.traffic_source_id),
    trackerId: idOrNull(row.tracker_id),
    occurredAt: new Date(row.occurred_at).toISOString(),
    recordedAt: new Date(row.recorded_at).toISOString(),
  };
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
}

/** Writes the conversions in one statement; those whose externalId is taken are skipped. */
function insertConversions(
  tx: Queryable,
  tenantId: string,
  rows: { id: string; item: ValidConversion; click: ClickRow | null; currency: string | null }[],
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
 * is a duplicate of it), added to the daily rollups, and handed to the hooks (outbox rows of
 * outgoing webhooks) in this same transaction. Set-based: one statement per step for the whole
 * batch (clicks, insert, first records of duplicates, rollups, each hook), whatever its size.
 */
export async function recordConversions(
  tx: Queryable,
  tenantId: string,
  items: ValidConversion[],
  now: Date,
  hooks: readonly ConversionHook[] = [],
): Promise<RecordedConversion[]> {
  const clickIds = [...new Set(items.flatMap((item) => (item.clickId === null ? [] : [item.clickId])))];
  const clicks = await loadClicks(tx, tenantId, clickIds);
  // A value sent without a currency is in the tenant's default currency (a tenant setting): a
  // network whose template has no currency macro still gets its conversion recorded.
  const needsCurrency = items.some((item) => item.value !== null && item.currency === null);
  const defaultCurrency = needsCurrency ? await tenantDefaultCurrency(tx, tenantId) : null;
  // Only the first item of an externalId is offered for insertion; the rest repeat it.
  const offered = new Set<string>();
  const rows = items.flatMap((item, index) => {
    if (item.externalId !== null) {
      if (offered.has(item.externalId)) return [];
      offered.add(item.externalId);
    }
    const click = item.clickId === null ? null : (clicks.get(item.clickId) ?? null);
    const currency = item.value !== null && item.currency === null ? defaultCurrency : item.currency;
    return [{ id: newId("cnv"), index, item, click, currency }];
  });
  const inserted = new Map((await insertConversions(tx, tenantId, rows, now)).map((row) => [row.id, row]));
  // By the item's place in the batch.
  const fresh = new Map<number, ConversionRecord>();
  for (const row of rows) {
    const written = inserted.get(row.id);
    if (written) fresh.set(row.index, toRecord(written));
  }
  const repeated = items.flatMap((item, index) => (fresh.has(index) ? [] : [item.externalId ?? ""]));
  const firsts = await firstRecords(tx, tenantId, [...new Set(repeated)]);

  const rollups = new RollupBatch();
  const results: RecordedConversion[] = [];
  for (const [index, item] of items.entries()) {
    const conversion = fresh.get(index);
    if (conversion === undefined) {
      const first = firsts.get(item.externalId ?? "");
      if (!first) throw new Error("conversion conflicted on externalId but the first record is missing");
      results.push({ conversion: toRecord(first), duplicate: true });
      continue;
    }
    rollups.add(
      {
        tenantId,
        day: item.occurredAt.toISOString().slice(0, 10),
        accountId: conversion.accountId ?? 0,
        linkId: conversion.linkId ?? 0,
        brandId: conversion.brandId ?? 0,
        programId: conversion.programId ?? 0,
        trafficSourceId: conversion.trafficSourceId ?? 0,
        trackerId: conversion.trackerId ?? 0,
        country: (item.clickId === null ? null : clicks.get(item.clickId)?.country) ?? "",
        currency: item.value === null ? "" : (conversion.currency ?? ""),
      },
      // A conversion without a value counts in the reports' sums as 0.
      { type: item.type, amount: item.value ?? "0" },
    );
    results.push({ conversion, duplicate: false });
  }
  const created = results.filter((r) => !r.duplicate).map((r) => r.conversion);
  if (created.length > 0) for (const hook of hooks) await hook(tx, tenantId, created, now);
  // Last: a busy link's conversions all update one rollup row, and each holds its lock until the
  // commit. Written after everything else, the lock is held for this statement and the commit
  // only, not across the hooks' round trips, so intake on one link is not bounded by them.
  await rollups.write(tx);
  return results;
}

export async function getConversion(db: Queryable, tenantId: string, id: string): Promise<ConversionRecord | null> {
  const [row] = await db.query<ConversionRow>("select * from conversions where tenant_id = $1 and id = $2", [
    tenantId,
    id,
  ]);
  return row ? toRecord(row) : null;
}

export interface ConversionFilter {
  offset: number;
  limit: number;
  type?: ConversionType | undefined;
  clickId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** Newest first by occurredAt; the date range applies to occurredAt (inclusive). */
export async function listConversions(
  db: Queryable,
  tenantId: string,
  filter: ConversionFilter,
): Promise<{ items: ConversionRecord[]; total: number }> {
  const where = new Conditions("c.tenant_id = $1", tenantId)
    .add("c.type = $", filter.type)
    .add("c.click_id = $", filter.clickId)
    .add("c.occurred_at >= $", filter.from)
    .add("c.occurred_at <= $", filter.to);
  const { rows, total } = await selectPage<ConversionRow>(
    db,
    {
      select: "c.*",
      from: "conversions c",
      where: where.sql,
      params: where.params,
      orderBy: "c.occurred_at desc, c.id desc",
    },
    filter,
  );
  return { items: rows.map(toRecord), total };
}
