import type { Queryable } from "../../platform/db/index.js";
import { Conditions } from "../../platform/db/paging.js";
import { containsPattern } from "../../platform/db/search.js";
import { ApiError } from "../../platform/http/errors.js";
import { catalogItemOf } from "../catalog/index.js";
import { CONVERSION_STATUSES } from "../tracking/index.js";
import { selectWindow } from "./exact-window.js";
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
import { chooseRollup, NO_BLOCKS, readBlockState } from "./sources.js";
import { findStat, STATS, type StatDef, statColumns } from "./stats.js";
import { readStatusFilter, statusParam } from "./status.js";

/** Accounts (or brand links) of the tenant, each with its metrics over one or two windows. */
export interface CompositeKind {
  name: "accounts" | "links";
  table: "accounts" | "links";
  /** `from` clause: the listed row `c` (a link joined to its account `a`). */
  from: string;
  /** The rollup column that keys a row's metrics. */
  rollupKey: string;
  params: ParamDef[];
  filters: Record<string, string>;
}

const SORTABLE = STATS.filter((s) => s.compositeSort);

const common: ParamDef[] = [
  {
    name: "metricsFrom",
    kind: "date",
    end: "from",
    description:
      "Start of the metrics window, inclusive: a date (from its start in timeZone) or a date-time, counted exactly; default 29 days before metricsTo",
  },
  {
    name: "metricsTo",
    kind: "date",
    end: "to",
    description:
      "End of the metrics window, inclusive: a date (to its end in timeZone) or a date-time; default today (in timeZone)",
  },
  {
    name: "comparisonFrom",
    kind: "date",
    end: "from",
    description: "Start of the comparison window, inclusive, a date or a date-time (with comparisonTo)",
  },
  {
    name: "comparisonTo",
    kind: "date",
    end: "to",
    description: "End of the comparison window, inclusive, a date or a date-time (with comparisonFrom)",
  },
  {
    name: "sortBy",
    kind: "text",
    maxLength: 100,
    description: `name (ascending; -name descending) or a metric, highest first unless prefixed + (ascending): ${SORTABLE.map((s) => s.name + (s.aliases.length ? ` (alias ${s.aliases.join(", ")})` : "")).join(", ")}`,
  },
  CURRENCY_PARAM,
  TIME_ZONE_PARAM,
  { name: "search", kind: "text", maxLength: 200, description: "Case-insensitive part of the name" },
  { name: "programId", kind: "id", description: "Only this program's" },
  { name: "brandId", kind: "id", description: "Only this brand's" },
  // One parameter for both kinds of status, as the reports take `status` for conversions: the
  // account's (active, inactive) was here first, and a link written with it stays valid.
  {
    name: "status",
    kind: "list",
    description: `active or inactive: only accounts of that status. ${statusParam("status").description}`,
  },
  {
    name: "offset",
    kind: "integer",
    min: 0,
    max: 10_000_000,
    default: 0,
    description: "0-based index of the first item",
  },
  { name: "limit", kind: "integer", min: 1, max: 500, default: 50, description: "Page size, 1-500" },
];

export const ACCOUNT_METRICS: CompositeKind = {
  name: "accounts",
  table: "accounts",
  from: "accounts c",
  rollupKey: "account_id",
  params: common,
  filters: {
    programId: "c.program_id = $",
    brandId: "c.program_id in (select p.id from programs p where $ = any(p.brand_ids))",
    accountStatus: "c.status = $",
  },
};

export const LINK_METRICS: CompositeKind = {
  name: "links",
  table: "links",
  from: "links c join accounts a on a.id = c.account_id",
  rollupKey: "link_id",
  params: [...common, { name: "accountId", kind: "id", description: "Only this account's links" }],
  filters: {
    programId: "a.program_id = $",
    brandId: "c.brand_id = $",
    accountStatus: "a.status = $",
    accountId: "c.account_id = $",
  },
};

function metricsOf(row: Record<string, unknown>, prefix: string): Record<string, number> {
  return Object.fromEntries(STATS.map((s) => [s.name, Number(row[`${prefix}${s.name}`] ?? 0)]));
}

const ACCOUNT_STATUSES = ["active", "inactive"];

/**
 * A composite's `status` list: its account words (at most one of active, inactive) and its
 * conversion statuses (read by readStatusFilter); a 400 naming `status` for any other word.
 */
function splitStatus(value: ParamValue): { accountStatus: string | undefined; conversionStatuses: ParamValue } {
  if (!Array.isArray(value)) return { accountStatus: undefined, conversionStatuses: undefined };
  const words = value.map((w) => w.toLowerCase());
  const account = [...new Set(words.filter((w) => ACCOUNT_STATUSES.includes(w)))];
  const conversions = words.filter((w) => !ACCOUNT_STATUSES.includes(w));
  if (account.length > 1) {
    throw ApiError.validation("status", "takes one account status, active or inactive, not both");
  }
  for (const word of conversions) {
    if (!(CONVERSION_STATUSES as readonly string[]).includes(word)) {
      throw ApiError.validation(
        "status",
        `'${word}' is not a status; active or inactive (accounts), or ${CONVERSION_STATUSES.join(", ")} (conversions)`,
      );
    }
  }
  return { accountStatus: account[0], conversionStatuses: conversions.length > 0 ? conversions : undefined };
}

/** The sort over the filtered set `c`, with the sort metric (if any) as `s."<stat>"`. */
function readOrder(raw: string | undefined): { stat: StatDef | null; direction: "asc" | "desc" } {
  if (raw === undefined || raw.trim() === "") return { stat: null, direction: "asc" };
  const { key, direction } = readSort(raw);
  if (key.toLowerCase() === "name") return { stat: null, direction: direction === "desc" ? "desc" : "asc" };
  const stat = findStat(key);
  if (!stat?.compositeSort) {
    throw ApiError.validation(
      "sortBy",
      `Unknown sort column '${key}'; use name or one of ${SORTABLE.map((s) => s.name).join(", ")} (alias ftd)`,
    );
  }
  return { stat, direction: direction === "asc" ? "asc" : "desc" };
}

/**
 * Runs an accounts or links composite: the whole filtered set is sorted before it is paged. One
 * statement: the sort metric alone for every account (link) with traffic in the metrics window,
 * when sorting by one (`s`); the page of the filtered set (`page`); then every metric for the
 * page's accounts (links) alone, in each window (`m`, `p`). The windows read the smallest rollup
 * keyed by account (link), through the blocks of days that tile them.
 */
export async function runComposite(
  db: Queryable,
  kind: CompositeKind,
  tenantId: string,
  raw: Record<string, unknown>,
  now: Date,
  limits: ReportLimits,
): Promise<{
  items: Record<string, unknown>[];
  pagination: { offset: number; limit: number; total: number };
  meta: ReportMeta;
}> {
  const defaults = await reportDefaults(db, tenantId);
  const params = parseParams(kind.params, raw, defaults.timeZone);
  const zone = params.timeZone as string;
  const currency = reportCurrency(params.currency as string | undefined, defaults);
  const fallback = last30Days(now, zone);
  const metrics = dateWindow(params, ["metricsFrom", "metricsTo"], fallback, limits.maxWindowDays, zone) ?? fallback;
  const comparison = dateWindow(params, ["comparisonFrom", "comparisonTo"], null, limits.maxWindowDays, zone);
  const { accountStatus, conversionStatuses } = splitStatus(params.status);
  const status = readStatusFilter("status", conversionStatuses, [metrics, comparison], now);
  const offset = params.offset as number;
  const limit = params.limit as number;
  const { stat, direction } = readOrder(params.sortBy as string | undefined);

  const filter = new Conditions("c.tenant_id = $1", tenantId).add(
    "lower(c.name) like $",
    containsPattern(params.search as string | undefined) ?? undefined,
  );
  const filterValues: Record<string, unknown> = { ...params, accountStatus };
  for (const [param, condition] of Object.entries(kind.filters)) filter.add(condition, filterValues[param]);
  // The windows' and the page's parameters follow the filter's.
  const values = filter.params;
  const where = filter.sql;
  const filtered = values.length;
  const rollup = chooseRollup([kind.rollupKey]);
  const conversion = await planConversion(
    db,
    tenantId,
    currency,
    comparison ? [metrics, comparison] : [metrics],
    rollup,
    status.raw,
  );
  const blockState = rollup.spanned ? await readBlockState(db, tenantId, rollup.table) : NO_BLOCKS;
  // What the metrics window left out for want of a rate, read as days (only when a factor is missing).
  const unconverted = await unconvertedOf(
    db,
    conversion,
    selectWindow(rollup, metrics, true, NO_BLOCKS, now, [tenantId], { statuses: status.raw }),
  );
  const key = `m.${kind.rollupKey}`;
  /** Each window's rows as read (its parameters added to `values` once), by the window. */
  const reads = new Map<object, { from: string; where: string }>();
  /** `from ... where ...` over the rows of a window; for the page's accounts (links) alone when `pageOnly`. */
  const windowSql = (window: { from: Date; to: Date }, pageOnly: boolean) => {
    let read = reads.get(window);
    if (read === undefined) {
      // Every account (link) of the catalog is shown, so a group summing to nothing needs no hiding.
      // Exactly the window's instants: whole days from the rollups, partial edge days from the raw
      // events; amounts in the report's currency.
      const select = (byDay: boolean, after: readonly unknown[]) =>
        selectWindow(rollup, window, byDay, blockState, now, after, { statuses: status.raw });
      const rows = rowsInCurrency(select, false, rollup, conversion, values);
      values.push(...rows.params.slice(values.length));
      read = { from: rows.from, where: rows.where };
      reads.set(window, read);
    }
    const page = pageOnly ? ` and ${key} = any(array(select page.id from page))` : "";
    return `from ${read.from} m where ${read.where}${page}`;
  };
  const sortSql = stat
    ? `s as (select ${key} as key, ${statColumns([stat])} ${windowSql(metrics, false)} group by 1),`
    : "";
  const [sortValue, sortJoin] = stat ? [`coalesce(s."${stat.name}", 0)`, "left join s on s.key = c.id"] : ["null", ""];
  values.push(offset, limit);
  // By name (lower-cased), or by the metric; then by id.
  const order = (value: string, name: string, id: string) =>
    stat ? `${value} ${direction}, ${id}` : `${name} ${direction}, ${id}`;
  const pageSql = `page as (
      select c.*, ${sortValue} as sort_value, count(*) over ()::int as total_rows
      from ${kind.from} ${sortJoin}
      where ${where}
      order by ${order(sortValue, "lower(c.name)", "c.id")}
      offset $${values.length - 1} limit $${values.length}
    )`;
  const metricsSql = `m as (select ${key} as key, ${statColumns(STATS)} ${windowSql(metrics, true)} group by 1)`;
  const comparisonSql = comparison
    ? `, p as (select ${key} as key, ${statColumns(STATS)} ${windowSql(comparison, true)} group by 1)`
    : "";
  const rows = await db.query<Record<string, unknown>>(
    `with ${sortSql} ${pageSql}, ${metricsSql}${comparisonSql}
     select page.*, ${STATS.map((s) => `m."${s.name}" as "m_${s.name}"`).join(", ")}
       ${comparison ? `, ${STATS.map((s) => `p."${s.name}" as "p_${s.name}"`).join(", ")}` : ""}
     from page
     left join m on m.key = page.id
     ${comparison ? "left join p on p.key = page.id" : ""}
     order by ${order("page.sort_value", "lower(page.name)", "page.id")}`,
    values,
  );
  const items = rows.map((row) => ({
    ...catalogItemOf(kind.table, row),
    metrics: metricsOf(row, "m_"),
    ...(comparison ? { comparisonMetrics: metricsOf(row, "p_") } : {}),
  }));
  // An offset past the end has no row to carry the count: count the filtered set on its own.
  let total = rows[0]?.total_rows === undefined ? 0 : Number(rows[0].total_rows);
  if (rows.length === 0 && offset > 0) {
    const [counted] = await db.query<{ n: number }>(
      `select count(*)::int as n from ${kind.from} where ${where}`,
      values.slice(0, filtered),
    );
    total = counted?.n ?? 0;
  }
  return {
    items,
    pagination: { offset, limit, total },
    meta: reportMeta(zone, conversion.currency, status.list, unconverted),
  };
}
