import type { Queryable } from "../../platform/db/index.js";
import { Conditions } from "../../platform/db/paging.js";
import { ApiError } from "../../platform/http/errors.js";
import type { CONVERSION_TYPES } from "../tracking/index.js";
import { dateWindow, dayRange, last30Days, type ParamDef, type ParamValue, parseParams, readSort } from "./params.js";
import { findStat, MEASURES, STATS, type StatDef, statColumns } from "./stats.js";

/** A breakdown of the performance report. Entity fields show the name and add `<field>Id` in json. */
interface FieldDef {
  name: string;
  description: string;
  /** Grouping expression over `m`. */
  group: string;
  /** Output expression over the grouped row `g` (column `f`) and the joined name `n`. */
  entity?: { table: string };
  format?: (f: string) => string;
}

export const FIELDS: FieldDef[] = [
  { name: "date", description: "UTC day (YYYY-MM-DD)", group: "m.day", format: (f) => `to_char(${f}, 'YYYY-MM-DD')` },
  {
    name: "week",
    description: "ISO week, as the date of its Monday (YYYY-MM-DD)",
    // Date arithmetic, not date_trunc, whose timestamptz overload would depend on the session's time zone.
    group: "(m.day - (extract(isodow from m.day)::int - 1))",
    format: (f) => `to_char(${f}, 'YYYY-MM-DD')`,
  },
  { name: "month", description: "Month (YYYY-MM)", group: "to_char(m.day, 'YYYY-MM')" },
  { name: "brand", description: "Brand name (json adds brandId)", group: "m.brand_id", entity: { table: "brands" } },
  {
    name: "program",
    description: "Program name (json adds programId)",
    group: "m.program_id",
    entity: { table: "programs" },
  },
  {
    name: "account",
    description: "Account name (json adds accountId)",
    group: "m.account_id",
    entity: { table: "accounts" },
  },
  { name: "link", description: "Brand link name (json adds linkId)", group: "m.link_id", entity: { table: "links" } },
  {
    name: "trafficSource",
    description: "Traffic source name (json adds trafficSourceId)",
    group: "m.traffic_source_id",
    entity: { table: "traffic_sources" },
  },
  {
    name: "tracker",
    description: "Tracker name (json adds trackerId)",
    group: "m.tracker_id",
    entity: { table: "trackers" },
  },
  { name: "country", description: "Country code of the click, null when unknown", group: "nullif(m.country, '')" },
  {
    name: "conversionType",
    description: "Conversion type; clicks are reported on rows whose conversionType is null",
    group: "m.conversion_type",
  },
];

const FIELD_BY_NAME = new Map(FIELDS.map((f) => [f.name.toLowerCase(), f]));

export const PERFORMANCE_PARAMS: ParamDef[] = [
  { name: "fields", kind: "list", description: `Breakdowns, comma-separated: ${FIELDS.map((f) => f.name).join(", ")}` },
  {
    name: "stats",
    kind: "list",
    description: `Stats, comma-separated (default all): ${STATS.map((s) => s.name + (s.aliases.length ? ` (alias ${s.aliases.join(", ")})` : "")).join(", ")}`,
  },
  {
    name: "conversionDateFrom",
    kind: "date",
    end: "from",
    description: "First day (YYYY-MM-DD or a date-time, whole UTC days); default 29 days before conversionDateTo",
  },
  { name: "conversionDateTo", kind: "date", end: "to", description: "Last day, inclusive; default today (UTC)" },
  { name: "brandId", kind: "id", description: "Only this brand" },
  { name: "programId", kind: "id", description: "Only this program" },
  { name: "accountId", kind: "id", description: "Only this account" },
  { name: "trafficSourceId", kind: "id", description: "Only this traffic source" },
  { name: "linkId", kind: "id", description: "Only this brand link" },
  { name: "trackerId", kind: "id", description: "Only this tracker" },
  {
    name: "sortBy",
    kind: "text",
    maxLength: 100,
    description:
      "A requested stat (highest first; +stat ascending) or field (ascending; -field descending); default the fields in order",
  },
  { name: "offset", kind: "integer", min: 0, max: 1_000_000, default: 0, description: "Rows to skip" },
  { name: "limit", kind: "integer", min: 1, max: 999, default: 100, description: "Rows, 1 to 999 (default 100)" },
  {
    name: "responseType",
    kind: "enum",
    values: ["json", "table"],
    default: "json",
    description: "json: keyed objects; table: columns and rows",
  },
];

const FILTER_COLUMNS: Record<string, string> = {
  brandId: "m.brand_id",
  programId: "m.program_id",
  accountId: "m.account_id",
  trafficSourceId: "m.traffic_source_id",
  linkId: "m.link_id",
  trackerId: "m.tracker_id",
};

/** Which rollup measure each conversion type carries, for the conversionType breakdown. */
const TYPE_MEASURES: Partial<
  Record<(typeof CONVERSION_TYPES)[number], Partial<Record<(typeof MEASURES)[number], string>>>
> = {
  Signup: { signup_count: "b.signup_count" },
  FirstTimeDeposit: { ftd_count: "b.ftd_count" },
  Qualifier: { qualifier_count: "b.qualifier_count" },
  Deposit: { deposit_count: "b.deposit_count", deposit_amount: "b.deposit_amount" },
  CpaCommission: { cpa_amount: "b.cpa_amount" },
  RevShareCommission: { revshare_amount: "b.revshare_amount" },
  FlatFeeCommission: { flatfee_amount: "b.flatfee_amount" },
};

/** The rollup column each field groups on. */
const RAW_COLUMN: Record<string, string> = {
  date: "day",
  week: "day",
  month: "day",
  brand: "brand_id",
  program: "program_id",
  account: "account_id",
  link: "link_id",
  trafficSource: "traffic_source_id",
  tracker: "tracker_id",
  country: "country",
};

/**
 * For a breakdown by conversion type: the rollups summed by the other fields' columns first,
 * then split into one row per conversion type (and one for clicks), so the split touches a
 * row per group, not a row per rollup row.
 */
function byTypeSource(fields: FieldDef[], where: string): string {
  const raw = [...new Set(fields.flatMap((f) => (RAW_COLUMN[f.name] ? [RAW_COLUMN[f.name] as string] : [])))];
  const row = (type: string | null, values: Partial<Record<(typeof MEASURES)[number], string>>) =>
    `(${type === null ? "null::text" : `'${type}'`}, ${MEASURES.map((m) => values[m] ?? "0").join(", ")})`;
  const rows = [
    row(null, { clicks: "b.clicks", unique_clicks: "b.unique_clicks" }),
    ...Object.entries(TYPE_MEASURES).map(([type, values]) => row(type, values)),
  ];
  const sums = MEASURES.map((c) => `sum(m.${c}) as ${c}`);
  return `(select ${[...raw.map((c) => `b.${c}`), "t.*"].join(", ")}
    from (select ${[...raw.map((c) => `m.${c}`), ...sums].join(", ")}
            from daily_rollups m where ${where}
            ${raw.length > 0 ? `group by ${raw.map((c) => `m.${c}`).join(", ")}` : ""}) b
    cross join lateral (values ${rows.join(", ")}) as t (conversion_type, ${MEASURES.join(", ")})
    where ${MEASURES.map((m) => `t.${m} <> 0`).join(" or ")}) m`;
}

function pick<T extends { name: string }>(
  names: string[] | undefined,
  find: (name: string) => T | undefined,
  param: string,
  what: string,
): T[] {
  const out: T[] = [];
  for (const name of names ?? []) {
    const found = find(name);
    if (!found) throw ApiError.invalid(param, `Unknown ${what} '${name}'`);
    if (!out.includes(found)) out.push(found);
  }
  return out;
}

export interface PerformanceResult {
  data: Record<string, unknown>[] | { columns: string[]; rows: unknown[][] };
  pagination: { offset: number; limit: number; total: number };
}

/** A field's sort key: entities by the name shown, then id. */
function fieldKey(field: FieldDef, i: number, direction: "asc" | "desc"): string {
  const nulls = direction === "asc" ? "nulls first" : "nulls last";
  return field.entity ? `e${i}.name ${direction} ${nulls}, g.f${i} ${direction}` : `g.f${i} ${direction} ${nulls}`;
}

function orderBy(sortBy: string | undefined, fields: FieldDef[], stats: StatDef[]): string {
  const byFields = fields.map((f, i) => fieldKey(f, i, "asc"));
  if (sortBy === undefined) return [...byFields, "1"].join(", ");
  const { key, direction } = readSort(sortBy);
  const stat = findStat(key);
  const statIndex = stat ? stats.indexOf(stat) : -1;
  if (stat && statIndex >= 0) {
    return [`g."${stat.name}" ${direction === "asc" ? "asc" : "desc"}`, ...byFields, "1"].join(", ");
  }
  const field = FIELD_BY_NAME.get(key.toLowerCase());
  const fieldIndex = field ? fields.indexOf(field) : -1;
  if (field && fieldIndex >= 0) {
    return [fieldKey(field, fieldIndex, direction === "desc" ? "desc" : "asc"), ...byFields, "1"].join(", ");
  }
  throw ApiError.validation("sortBy", `'${key}' must be one of the requested fields or stats`);
}

/** GET /reports/events/performance: rollups grouped by the requested fields over the window. */
export async function runPerformance(
  db: Queryable,
  tenantId: string,
  raw: Record<string, unknown>,
  now: Date,
): Promise<PerformanceResult> {
  const params: Record<string, ParamValue> = parseParams(PERFORMANCE_PARAMS, raw);
  const fields = pick(
    params.fields as string[] | undefined,
    (n) => FIELD_BY_NAME.get(n.toLowerCase()),
    "fields",
    "field",
  );
  const requested = pick(params.stats as string[] | undefined, findStat, "stats", "stat");
  const stats = requested.length > 0 ? requested : STATS;
  const window = dateWindow(params, ["conversionDateFrom", "conversionDateTo"], last30Days(now)) ?? last30Days(now);
  const [fromDay, toDay] = dayRange(window);
  const offset = params.offset as number;
  const limit = params.limit as number;

  const filter = new Conditions("m.tenant_id = $1 and m.day between $2::date and $3::date", tenantId, fromDay, toDay);
  for (const [param, column] of Object.entries(FILTER_COLUMNS)) filter.add(`${column} = $`, params[param]);
  const values = filter.params;
  const byType = fields.some((f) => f.name === "conversionType");
  // Split by type, the filters apply inside the split source, before the rows are grouped.
  const source = byType ? byTypeSource(fields, filter.sql) : "daily_rollups m";
  const outerWhere = byType ? "true" : filter.sql;
  const groups = fields.map((f, i) => `${f.group} as f${i}`);
  const joins = fields.flatMap((f, i) => (f.entity ? [`left join ${f.entity.table} e${i} on e${i}.id = g.f${i}`] : []));
  const outputs = fields.map((f, i) => {
    if (f.entity) return `e${i}.name as "${f.name}", nullif(g.f${i}, 0)::float8 as "${f.name}Id"`;
    return `${f.format ? f.format(`g.f${i}`) : `g.f${i}`} as "${f.name}"`;
  });
  values.push(offset, limit);
  const sql = `
    with g as (
      select ${[...groups, statColumns(stats)].join(", ")}
      from ${source}
      where ${outerWhere}
      ${fields.length > 0 ? `group by ${fields.map((_, i) => i + 1).join(", ")}` : ""}
    )
    select ${[...outputs, ...stats.map((s) => `g."${s.name}"`), "count(*) over ()::int as total_rows"].join(", ")}
    from g ${joins.join(" ")}
    order by ${orderBy(params.sortBy as string | undefined, fields, stats)}
    offset $${values.length - 1} limit $${values.length}`;
  const rows = await db.query<Record<string, unknown>>(sql, values);
  // Without fields the report is one total row, zeros included, even with no traffic. A page
  // past the end has no row to carry the count: ask for the first row just for it.
  let counted = rows[0];
  if (counted === undefined && offset > 0) {
    [counted] = await db.query<Record<string, unknown>>(sql, [...values.slice(0, -2), 0, 1]);
  }
  const total = counted?.total_rows === undefined ? 0 : Number(counted.total_rows);
  const json = rows.map((row) => {
    const { total_rows: _total, ...rest } = row;
    return rest;
  });
  const pagination = { offset, limit, total };
  if (params.responseType === "table") {
    const columns = [...fields.map((f) => f.name), ...stats.map((s) => s.name)];
    return { data: { columns, rows: json.map((row) => columns.map((c) => row[c] ?? null)) }, pagination };
  }
  return { data: json, pagination };
}
