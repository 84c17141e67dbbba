import type { Queryable } from "../../platform/db/index.js";
import { Conditions } from "../../platform/db/paging.js";
import { ApiError } from "../../platform/http/errors.js";
import { offsetAt } from "../../platform/time-zone.js";
import type { CONVERSION_TYPES } from "../tracking/index.js";
import { COUNTED_STATUSES, DAY_ROWS, SUB_ID_VALUES_PER_DAY } from "../tracking/index.js";
import { type LocalTime, type SelectedWindow, selectWindow, TEXT_DIMENSIONS } from "./exact-window.js";
import {
  planConversion,
  type ReportMeta,
  reportCurrency,
  reportDefaults,
  reportMeta,
  rowsInCurrency,
  unconvertedOf,
} from "./money.js";
import {
  CURRENCY_PARAM,
  dateWindow,
  last30Days,
  type ParamDef,
  type ParamValue,
  parseParams,
  type ReportLimits,
  readSort,
  TIME_ZONE_PARAM,
} from "./params.js";
import { checkRawWindow, hasGaps, RAW_EVENTS, RAW_WINDOW_DAYS } from "./raw-source.js";
import { findRollup, NO_BLOCKS, readBlockState, type WindowRows } from "./sources.js";
import { AS_IS, findStat, isMoney, MEASURES, STATS, type StatDef, SUMMED, statColumns } from "./stats.js";
import { readStatusFilter, statusParam } from "./status.js";

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

/**
 * The time fields group on `m.day` (a UTC day) when the report is in UTC and has no hour field;
 * otherwise on the rows' local day (see localTimeOf), written in for `m.day` by localFields.
 */
export const FIELDS: FieldDef[] = [
  {
    name: "date",
    description: "Day in timeZone (YYYY-MM-DD)",
    group: "m.day",
    format: (f) => `to_char(${f}, 'YYYY-MM-DD')`,
  },
  {
    name: "week",
    description: "ISO week in timeZone, as the date of its Monday (YYYY-MM-DD)",
    // Date arithmetic, not date_trunc, whose timestamptz overload would depend on the session's time zone.
    group: "(m.day - (extract(isodow from m.day)::int - 1))",
    format: (f) => `to_char(${f}, 'YYYY-MM-DD')`,
  },
  { name: "month", description: "Month in timeZone (YYYY-MM)", group: "to_char(m.day, 'YYYY-MM')" },
  {
    name: "hour",
    description: "Hour in timeZone, with the zone's offset at that hour (2026-11-01T10:00+01:00)",
    group: "m.local_hour",
  },
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
    name: "device",
    description: "Device type of the click (mobile, tablet, desktop, tv, ...), null when unknown",
    group: "nullif(m.device, '')",
  },
  {
    name: "os",
    description: "OS family of the click (Android, iOS, Windows, ...), null when unknown",
    group: "nullif(m.os, '')",
  },
  {
    name: "browser",
    description: "Browser family of the click (Chrome, Safari, ...), null when unknown",
    group: "nullif(m.browser, '')",
  },
  {
    name: "parameterA",
    description: `Sub-id pa of the click URL, null when absent (with another sub-id, an account, link, tracker or country: a window of at most ${RAW_WINDOW_DAYS} days)`,
    group: "nullif(m.parameter_a, '')",
  },
  {
    name: "parameterB",
    description: `Sub-id pb of the click URL, null when absent (with another sub-id, an account, link, tracker or country: a window of at most ${RAW_WINDOW_DAYS} days)`,
    group: "nullif(m.parameter_b, '')",
  },
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
    description:
      "Start, inclusive: a date (YYYY-MM-DD, from its start in timeZone) or a date-time, counted exactly; default 29 days before conversionDateTo",
  },
  {
    name: "conversionDateTo",
    kind: "date",
    end: "to",
    description:
      "End, inclusive: a date (to its end in timeZone) or a date-time, counted exactly; default today (in timeZone)",
  },
  CURRENCY_PARAM,
  TIME_ZONE_PARAM,
  statusParam("status"),
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

/** The rollup column each filter reads. */
const FILTER_COLUMNS: Record<string, string> = {
  brandId: "brand_id",
  programId: "program_id",
  accountId: "account_id",
  trafficSourceId: "traffic_source_id",
  linkId: "link_id",
  trackerId: "tracker_id",
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
  device: "device",
  os: "os",
  browser: "browser",
  parameterA: "parameter_a",
  parameterB: "parameter_b",
};

/** Fields whose group is text, null where the event has none ('' in the rows): matched with coalesce. */
const TEXT_FIELDS: ReadonlySet<string> = new Set(
  Object.entries(RAW_COLUMN).flatMap(([field, column]) => (TEXT_DIMENSIONS.has(column) ? [field] : [])),
);

/** The row column a field groups on: a time field's local one when it reads local time (localFields). */
function rawColumnOf(field: FieldDef): string | undefined {
  if (field.group.includes("m.local_hour")) return "local_hour";
  if (field.group.includes("m.local_day")) return "local_day";
  return RAW_COLUMN[field.name];
}

/** Counts never go down: a type's count summed above zero says some rollup row had the type. */
const COUNTS: ReadonlySet<string> = new Set([
  "clicks",
  "signup_count",
  "ftd_count",
  "qualifier_count",
  "deposit_count",
]);

/**
 * For a breakdown by conversion type: the rollups summed by the other fields' columns first (`r`),
 * then by the other fields themselves (`c`), then split into one row per conversion type (and
 * one for clicks), so the split touches a row per group, not a row per rollup row. The source's
 * columns are the other fields' values (`f<i>`), the conversion type and the measures. A type's
 * row is kept where it has a measure that is not zero in some group of `r`, as if split there:
 * told by the type's count summed (a group with an amount has its count too), or for the
 * commissions, which have amounts alone and can be negative, by looking at each group of `r`.
 */
function byTypeSource(fields: FieldDef[], table: string, where: string, signed: boolean): string {
  const raw = [...new Set(fields.flatMap((f) => rawColumnOf(f) ?? []))];
  const others = fields.flatMap((f, i) => (f.name === "conversionType" ? [] : [{ f, i }]));
  const types: [string | null, Partial<Record<(typeof MEASURES)[number], string>>][] = [
    [null, { clicks: "clicks", unique_clicks: "unique_clicks", bot_clicks: "bot_clicks" }],
    ...Object.entries(TYPE_MEASURES).map(([type, values]) => [type, values] as [string, typeof values]),
  ];
  const row = ([type, values]: (typeof types)[number], n: number) =>
    `(${type === null ? "null::text" : `'${type}'`}, c.keep${n}, ${MEASURES.map((m) => (values[m] ? `c.${m}` : "0")).join(", ")})`;
  const keeps = types.map(([, values], n) => {
    const measures = Object.keys(values);
    const count = measures.find((m) => COUNTS.has(m));
    // The clicks' row is kept for bots' clicks alone too, as a breakdown without types shows them.
    const kept = values.bot_clicks
      ? "sum(m.clicks) > 0 or sum(m.bot_clicks) > 0"
      : count
        ? `sum(m.${count}) > 0`
        : `bool_or(${measures.map((m) => `m.${m} <> 0`).join(" or ")})`;
    return `coalesce(${kept}, false) as keep${n}`;
  });
  return `(select ${[...others.map(({ i }) => `c.f${i}`), "t.*"].join(", ")}
    from (select ${[...others.map(({ f, i }) => `${f.group} as f${i}`), ...MEASURES.map((m) => `sum(m.${m}) as ${m}`), ...keeps].join(", ")}
            from (select ${[...raw.map((c) => `m.${c}`), ...MEASURES.map((m) => `sum(m.${m}) as ${m}`)].join(", ")}
                    from ${table} m where ${where}
                    ${raw.length > 0 ? `group by ${raw.map((c) => `m.${c}`).join(", ")} ${having(signed)}` : ""}) m
            ${others.length > 0 ? `group by ${others.map((_, n) => n + 1).join(", ")}` : ""}) c
    cross join lateral (values ${types.map(row).join(", ")}) as t (conversion_type, keep, ${MEASURES.join(", ")})
    where t.keep) m`;
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
  meta: ReportMeta;
}

/** How the sort reaches a group's field values, entity names and stats in a query. */
interface SortRefs {
  field(i: number): string;
  name(i: number): string;
  stat(stat: StatDef): string;
}

const IN_G: SortRefs = { field: (i) => `g.f${i}`, name: (i) => `e${i}.name`, stat: (s) => `g."${s.name}"` };

/** A field's sort key: entities by the name shown, then id. */
function fieldKey(field: FieldDef, i: number, direction: "asc" | "desc", refs: SortRefs): string {
  const nulls = direction === "asc" ? "nulls first" : "nulls last";
  return field.entity
    ? `${refs.name(i)} ${direction} ${nulls}, ${refs.field(i)} ${direction}`
    : `${refs.field(i)} ${direction} ${nulls}`;
}

interface Sort {
  /** The requested stat the rows sort on first, if any. */
  stat?: StatDef;
  /** Else the requested field they sort on first, if any (its index in fields). */
  field?: number;
  direction: "asc" | "desc";
}

function readOrder(sortBy: string | undefined, fields: FieldDef[], stats: StatDef[]): Sort {
  if (sortBy === undefined) return { direction: "asc" };
  const { key, direction } = readSort(sortBy);
  const stat = findStat(key);
  if (stat && stats.includes(stat)) return { stat, direction: direction === "asc" ? "asc" : "desc" };
  const field = FIELD_BY_NAME.get(key.toLowerCase());
  // By name: the fields may be localFields' copies.
  const fieldIndex = field ? fields.findIndex((f) => f.name === field.name) : -1;
  if (fieldIndex >= 0) return { field: fieldIndex, direction: direction === "desc" ? "desc" : "asc" };
  throw ApiError.validation("sortBy", `'${key}' must be one of the requested fields or stats`);
}

/** The ORDER BY terms: the sort's stat or field, then every field in order (a total order). */
function orderBy(sort: Sort, fields: FieldDef[], refs: SortRefs): string {
  const terms = fields.map((f, i) => fieldKey(f, i, "asc", refs));
  const field = sort.field === undefined ? undefined : fields[sort.field];
  if (sort.stat) terms.unshift(`${refs.stat(sort.stat)} ${sort.direction}`);
  else if (field && sort.field !== undefined) terms.unshift(fieldKey(field, sort.field, sort.direction, refs));
  return [...terms, "1"].join(", ");
}

/** Dimensions a group has few of (brands, sources) or many (accounts, links, trackers). */
const MANY = new Set(["account", "link", "tracker"]);
const TIME_FIELDS = new Set(["date", "week", "month", "hour"]);

/**
 * How a report reads local time: not at all when it has no time field, or groups UTC days in UTC
 * (the rollups' days); else its rows carry their local day, and hour when it has the hour field.
 */
function localTimeOf(fields: FieldDef[], zone: string): LocalTime | undefined {
  const hour = fields.some((f) => f.name === "hour");
  if (!hour && (zone === "UTC" || !fields.some((f) => TIME_FIELDS.has(f.name)))) return undefined;
  return { zone, hour };
}

/** The fields as a report under local time groups them: on the local day, not the UTC one. */
const localFields = (fields: FieldDef[]): FieldDef[] =>
  fields.map((f) => (TIME_FIELDS.has(f.name) ? { ...f, group: f.group.replaceAll("m.day", "m.local_day") } : f));

/** The local hour an instant starts, as `YYYY-MM-DDTHH:00` and the zone's offset then. */
function hourLabel(start: Date, zone: string): string {
  const offset = offsetAt(start.getTime(), zone);
  const wall = new Date(start.getTime() + offset).toISOString().slice(0, 13);
  const minutes = Math.abs(offset) / 60_000;
  const sign = offset < 0 ? "-" : "+";
  return `${wall}:00${sign}${String(Math.floor(minutes / 60)).padStart(2, "0")}:${String(minutes % 60).padStart(2, "0")}`;
}

/** A field's output columns from its group value and, for entities, the joined name. */
function outputsOf(fields: FieldDef[], refs: SortRefs): string[] {
  return fields.map((f, i) => {
    if (f.entity) return `${refs.name(i)} as "${f.name}", nullif(${refs.field(i)}, 0)::float8 as "${f.name}Id"`;
    return `${f.format ? f.format(refs.field(i)) : refs.field(i)} as "${f.name}"`;
  });
}

const groupBy = (fields: FieldDef[]) => (fields.length > 0 ? `group by ${fields.map((_, i) => i + 1).join(", ")}` : "");

/** Over rows with some subtracted (WindowRows.signed): only the groups with a day row in the window. */
const having = (signed: boolean) => (signed ? `having sum(m.${DAY_ROWS}) > 0` : "");

/**
 * One pass: every group with every stat, named, sorted and paged, from the rows of `table` that
 * meet `where`. With `split` (a breakdown by conversion type) it reads byTypeSource instead, whose
 * rows are whole groups already, holding the other fields' values: its stats are read off each
 * row, with no second grouping.
 */
function groupedSql(
  fields: FieldDef[],
  stats: StatDef[],
  sort: Sort,
  { from, signed }: WindowRows,
  where: string,
  [offset, limit]: [number, number],
  split: boolean,
) {
  const joins = fields.flatMap((f, i) => (f.entity ? [`left join ${f.entity.table} e${i} on e${i}.id = g.f${i}`] : []));
  const group = (f: FieldDef, i: number) => (split && f.name !== "conversionType" ? `m.f${i}` : f.group);
  return `
    with g as (
      select ${[...fields.map((f, i) => `${group(f, i)} as f${i}`), statColumns(stats, split ? AS_IS : SUMMED)].join(", ")}
      from ${split ? byTypeSource(fields, from, where, signed) : `${from} m where ${where}`}
      ${split || fields.length === 0 ? "" : `${groupBy(fields)} ${having(signed)}`}
    )
    select ${[...outputsOf(fields, IN_G), ...stats.map((s) => `g."${s.name}"`), "count(*) over ()::int as total_rows"].join(", ")}
    from g ${joins.join(" ")}
    order by ${orderBy(sort, fields, IN_G)}
    offset $${offset} limit $${limit}`;
}

const IN_P: SortRefs = { field: (i) => `p.f${i}`, name: (i) => `p.n${i}`, stat: (s) => `p."${s.name}"` };

/**
 * Two passes, for breakdowns by account, link or tracker, which can have tens of thousands of
 * groups of which a page shows a hundred: the groups with only the stat they sort on (`k`) are
 * named, sorted and paged first (`p`); every stat is summed for the page's groups alone (`a`),
 * from the rows of the page's accounts (links, trackers). Same rows, same sums, same order.
 * Sorted by a stat, only the groups that reach the page's last value (`cut`) are named and sorted.
 * `a` is summed once, whatever the join: without statistics (PGlite, a fresh table) the planner
 * would join it in a nested loop and sum it again for each row of the page.
 */
function pagedSql(
  fields: FieldDef[],
  stats: StatDef[],
  sort: Sort,
  { from, signed }: WindowRows,
  where: string,
  page: [number, number],
) {
  // Sorted by a stat, a name is looked up for each group that reaches the cut alone (a scalar
  // subquery, evaluated after the filter; a join was planned as a hash of every account, 10 ms at
  // 10k accounts). Sorted by a field, every group needs its name: a join.
  const joins = fields.flatMap((f, i) =>
    f.entity && !sort.stat ? [`left join ${f.entity.table} e${i} on e${i}.id = k.f${i}`] : [],
  );
  const names = fields.flatMap((f, i) => {
    if (!f.entity) return [];
    return [
      sort.stat ? `(select e.name from ${f.entity.table} e where e.id = k.f${i}) as n${i}` : `e${i}.name as n${i}`,
    ];
  });
  const IN_K: SortRefs = {
    field: (i) => `k.f${i}`,
    name: (i) => (sort.stat ? `n${i}` : `e${i}.name`),
    stat: (s) => `k."${s.name}"`,
  };
  const narrow = fields.flatMap((f, i) =>
    MANY.has(f.name) ? [`m.${RAW_COLUMN[f.name]} = any(array(select p.f${i} from p))`] : [],
  );
  // Group values are never null but the text fields' ('' is shown as null).
  const same = fields.map((f, i) =>
    TEXT_FIELDS.has(f.name) ? `coalesce(a.f${i}, '') = coalesce(p.f${i}, '')` : `a.f${i} = p.f${i}`,
  );
  const [offset, limit] = page;
  let cut = "";
  let reaches = "true";
  if (sort.stat) {
    const stat = `k."${sort.stat.name}"`;
    cut = `cut as (select ${stat} as v from k order by ${stat} ${sort.direction} offset $${offset}::int + $${limit}::int - 1 limit 1),`;
    reaches = `${stat} ${sort.direction === "desc" ? ">=" : "<="} coalesce((select v from cut), '${sort.direction === "desc" ? "-" : ""}infinity')`;
  }
  return `
    with k as (
      select ${[...fields.map((f, i) => `${f.group} as f${i}`), ...(sort.stat ? [statColumns([sort.stat])] : [])].join(", ")}
      from ${from} m
      where ${where}
      ${groupBy(fields)} ${having(signed)}
    ),
    ${cut}
    p as (
      select ${["k.*", ...names, "(select count(*) from k)::int as total_rows"].join(", ")}
      from k ${joins.join(" ")}
      where ${reaches}
      order by ${orderBy(sort, fields, IN_K)}
      offset $${offset} limit $${limit}
    ),
    a as materialized (
      select ${[...fields.map((f, i) => `${f.group} as f${i}`), statColumns(stats)].join(", ")}
      from ${from} m
      where ${[where, ...narrow].join(" and ")}
      ${groupBy(fields)}
    )
    select ${[...outputsOf(fields, IN_P), ...stats.map((s) => `a."${s.name}"`), "p.total_rows"].join(", ")}
    from p left join a on ${same.join(" and ")}
    order by ${orderBy(sort, fields, IN_P)}`;
}

/**
 * GET /reports/events/performance: rollups grouped by the requested fields over the window; with
 * a status filter other than the rollups' statuses, conversions from the raw conversions.
 */
export async function runPerformance(
  db: Queryable,
  tenantId: string,
  raw: Record<string, unknown>,
  now: Date,
  limits: ReportLimits,
): Promise<PerformanceResult> {
  const defaults = await reportDefaults(db, tenantId);
  const params: Record<string, ParamValue> = parseParams(PERFORMANCE_PARAMS, raw, defaults.timeZone);
  const zone = params.timeZone as string;
  const currency = reportCurrency(params.currency as string | undefined, defaults);
  const picked = pick(
    params.fields as string[] | undefined,
    (n) => FIELD_BY_NAME.get(n.toLowerCase()),
    "fields",
    "field",
  );
  const local = localTimeOf(picked, zone);
  const fields = local === undefined ? picked : localFields(picked);
  const requested = pick(params.stats as string[] | undefined, findStat, "stats", "stat");
  const stats = requested.length > 0 ? requested : STATS;
  const fallback = last30Days(now, zone);
  const window =
    dateWindow(params, ["conversionDateFrom", "conversionDateTo"], fallback, limits.maxWindowDays, zone) ?? fallback;
  // Other statuses than the rollups hold: the conversions are read from the raw ones.
  const status = readStatusFilter("status", params.status, [window], now);
  const offset = params.offset as number;
  const limit = params.limit as number;

  const sort = readOrder(params.sortBy as string | undefined, fields, stats);

  // The smallest rollup with every dimension the fields and filters need.
  const columns = new Set(
    fields.flatMap((f) => {
      const column = RAW_COLUMN[f.name];
      return column !== undefined && !TIME_FIELDS.has(f.name) ? [column] : [];
    }),
  );
  for (const [param, column] of Object.entries(FILTER_COLUMNS)) if (params[param] !== undefined) columns.add(column);
  // None has them (both sub-ids; a device or sub-id beside an account, link, tracker or country),
  // or the sub-id's left a value out of a day of the window: the raw events, over a bounded window.
  const found = findRollup(columns);
  const gaps = found !== undefined && (await hasGaps(db, tenantId, found, window));
  const rollup = found === undefined || gaps ? RAW_EVENTS : found;
  if (rollup.raw) {
    const why = picked.filter((f) => RAW_COLUMN[f.name] !== undefined && !TIME_FIELDS.has(f.name)).map((f) => f.name);
    checkRawWindow(
      "conversionDateFrom",
      window,
      now,
      gaps
        ? `a sub-id with more than ${SUB_ID_VALUES_PER_DAY} values on a day of the window`
        : `a breakdown by ${why.join(", ")}`,
    );
  }
  const conversion = await planConversion(
    db,
    tenantId,
    currency,
    stats.some(isMoney) ? [window] : [],
    rollup,
    // The raw events' conversions are those of the counted statuses unless a filter says others.
    status.raw ?? (rollup.raw ? COUNTED_STATUSES : undefined),
  );
  const byDay = fields.some((f) => TIME_FIELDS.has(f.name));
  const blockState = rollup.spanned && !byDay ? await readBlockState(db, tenantId, rollup.table) : NO_BLOCKS;
  /** The window's rows, exactly its instants: whole days from the rollups, partial edge days from the raw events. */
  const select = (byDays: boolean, values: readonly unknown[]) =>
    selectWindow(rollup, window, byDays, blockState, now, values, { local, statuses: status.raw });
  /** `rows` and the report's filters. */
  const filtered = (rows: SelectedWindow) => {
    const where = new Conditions(rows.where, ...rows.params);
    for (const [param, column] of Object.entries(FILTER_COLUMNS)) where.add(`m.${column} = $`, params[param]);
    return where;
  };
  const read = rowsInCurrency(select, byDay, rollup, conversion, [tenantId]);
  const filter = filtered(read);
  // What had no rate, read as days with the report's filters (only when some factor is missing).
  const days = select(true, [tenantId]);
  const left = filtered(days);
  const unconverted = await unconvertedOf(db, conversion, { from: days.from, where: left.sql, params: left.params });
  const values = filter.params;
  values.push(offset, limit);
  // The placeholders of the page's offset and limit.
  const page: [number, number] = [values.length - 1, values.length];
  const byType = fields.some((f) => f.name === "conversionType");
  const sql =
    !byType && fields.some((f) => MANY.has(f.name))
      ? pagedSql(fields, stats, sort, read, filter.sql, page)
      : groupedSql(fields, stats, sort, read, filter.sql, page, byType);
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
    if (rest.hour instanceof Date) rest.hour = hourLabel(rest.hour, zone);
    return rest;
  });
  const pagination = { offset, limit, total };
  const meta: ReportMeta = reportMeta(zone, conversion.currency, status.list, unconverted);
  if (params.responseType === "table") {
    const columns = [...fields.map((f) => f.name), ...stats.map((s) => s.name)];
    return { data: { columns, rows: json.map((row) => columns.map((c) => row[c] ?? null)) }, pagination, meta };
  }
  return { data: json, pagination, meta };
}
