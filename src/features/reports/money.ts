/**
 * Money in one currency: each amount converted from its own currency at the rate in force on its
 * event's UTC day (the latest rate dated on or before it; a tenant's own rate wins over the
 * reference rate of the same day). The rollups keep amounts per currency and never converted, so
 * a new rate or another reporting currency applies to history at the next report.
 */
import { currencyCode } from "../../platform/currency.js";
import type { Queryable } from "../../platform/db/index.js";
import { DAY_MS } from "../../platform/durations.js";
import { ApiError } from "../../platform/http/errors.js";
import type { ConversionStatus } from "../tracking/index.js";
import { REPORT_MEASURES } from "../tracking/index.js";
import type { SelectedWindow } from "./exact-window.js";
import type { RollupSource, WindowRows } from "./sources.js";

/** What a tenant's reports are read in unless a request says otherwise. */
export interface ReportDefaults {
  /** The reporting currency, else the default one. */
  currency: string;
  /** IANA name. */
  timeZone: string;
}

/** The tenant's reporting currency and time zone (one read of its settings). */
export async function reportDefaults(db: Queryable, tenantId: string): Promise<ReportDefaults> {
  const [row] = await db.query<ReportDefaults>(
    `select coalesce(reporting_currency, default_currency) as currency, time_zone as "timeZone"
       from tenants where id = $1`,
    [tenantId],
  );
  return row ?? { currency: "USD", timeZone: "UTC" };
}

/** The currency a report is in: the request's (`currency`, checked), else the tenant's. */
export function reportCurrency(requested: string | undefined, defaults: ReportDefaults): string {
  if (requested === undefined) return defaults.currency;
  const code = currencyCode(requested.trim());
  if (code === null) {
    throw ApiError.validation("currency", `must be an ISO 4217 currency code such as EUR or USD, got '${requested}'`);
  }
  return code;
}

/** The rate of `code` in force on `day` for the tenant `$1`: tenant and reference looked up apart, each through the key. */
const rateAt = (code: string, day: string) => `(select z.rate from (
    (select r.rate, r.day, 1 as own from exchange_rates r
      where r.tenant_id = $1 and r.currency = ${code} and r.day <= ${day} order by r.day desc limit 1)
    union all
    (select r.rate, r.day, 0 from exchange_rates r
      where r.tenant_id = '' and r.currency = ${code} and r.day <= ${day} order by r.day desc limit 1)
  ) z order by z.day desc, z.own desc limit 1)`;

const euroOr = (code: string, day: string) => `case when ${code} = 'EUR' then 1::numeric else ${rateAt(code, day)} end`;

/**
 * For every currency the tenant has amounts in but `$2`, and every UTC day of `$3`..`$4` within
 * the days it has rows in `rollup` (the one the report reads): the factor from that currency to
 * `$2` (null without a rate). The first and last day are read through the rollup's key: on a
 * spanned rollup, from its single days (span 1, which every block is made of), as the key leads
 * with (tenant, span, day); without `span = 1`, PostgreSQL scanned the whole table for them
 * (1.3 s at 1M clicks, even for a tenant with nothing to convert).
 */
const factorsSql = (rollup: RollupSource) => {
  const days = `from ${rollup.table} r where r.tenant_id = $1${rollup.spanned ? " and r.span = 1" : ""}`;
  return `select d.day::date::text as day, c.currency,
    ${euroOr("$2", "d.day::date")} / ${euroOr("c.currency", "d.day::date")} as factor
  from report_currencies c
  cross join generate_series(
    greatest($3::date, (select min(r.day) ${days})),
    least($4::date, (select max(r.day) ${days})),
    interval '1 day') as d (day)
  where c.tenant_id = $1 and c.currency <> $2
  order by 1, 2`;
};

/**
 * As factorsSql, for a report whose conversions are read from the raw conversions of some
 * statuses (`$5`) between the instants `$3` and `$4`: a conversion of a status the rollups do not
 * hold is in neither report_currencies nor the rollups' days, so the currencies and days are
 * those of the raw conversions of those statuses in the windows' span, each currency from its
 * first day with an amount to its last (a currency counts only with a value, as the report reads
 * them). The windows start within the raw events' retention: at most that many days.
 */
const RAW_FACTORS_SQL = `with c as (
    select e.currency, min(e.occurred_at) as first, max(e.occurred_at) as last
      from conversions e
     where e.tenant_id = $1 and e.occurred_at >= $3::timestamptz and e.occurred_at <= $4::timestamptz
       and e.status = any($5::text[])
       and e.value is not null and e.currency is not null and e.currency <> $2
     group by 1)
  select d.day::date::text as day, c.currency,
    ${euroOr("$2", "d.day::date")} / ${euroOr("c.currency", "d.day::date")} as factor
  from c
  cross join generate_series(
    (c.first at time zone 'UTC')::date::timestamp, (c.last at time zone 'UTC')::date::timestamp, interval '1 day'
  ) as d (day)
  order by 1, 2`;

/** How a report converts its amounts: the factors of the days and currencies that need one. */
export interface Conversion {
  currency: string;
  days: string[];
  currencies: string[];
  /** Decimal strings; null where no rate is in force. */
  factors: (string | null)[];
}

const utcDay = (at: Date) => new Date(Math.floor(at.getTime() / DAY_MS) * DAY_MS).toISOString().slice(0, 10);

/**
 * The factors a report over `windows` needs to show its amounts in `currency` (one small query;
 * none without windows, for a report that shows no amount). With `statuses`, the report reads its
 * conversions from the raw conversions of those statuses (see RAW_FACTORS_SQL).
 */
export async function planConversion(
  db: Queryable,
  tenantId: string,
  currency: string,
  windows: readonly { from: Date; to: Date }[],
  rollup: RollupSource,
  statuses?: readonly ConversionStatus[],
): Promise<Conversion> {
  if (windows.length === 0) return { currency, days: [], currencies: [], factors: [] };
  const from = new Date(Math.min(...windows.map((w) => w.from.getTime())));
  const to = new Date(Math.max(...windows.map((w) => w.to.getTime())));
  const [sql, params]: [string, unknown[]] =
    statuses === undefined
      ? [factorsSql(rollup), [tenantId, currency, utcDay(from), utcDay(to)]]
      : [RAW_FACTORS_SQL, [tenantId, currency, from, to, statuses]];
  const rows = await db.query<{ day: string; currency: string; factor: string | null }>(sql, params);
  return {
    currency,
    days: rows.map((r) => r.day),
    currencies: rows.map((r) => r.currency),
    factors: rows.map((r) => r.factor),
  };
}

/** Some amount of the window is in another currency than the report's: the report adds its conversion. */
export const converts = (conversion: Conversion): boolean => conversion.days.length > 0;

const AMOUNTS: ReadonlySet<string> = new Set(REPORT_MEASURES.filter((m) => m.endsWith("_amount")));
const CONVERSION_COUNTS = REPORT_MEASURES.filter((m) => m.endsWith("_count"));

/** A report's rows as a `from` and the conditions that select them. */
export interface SelectedRows {
  from: string;
  where: string;
}

/**
 * The rows of a window with every amount in the report's currency: `rows` as the report reads them
 * (blocks of days where current, amounts as stored in each currency), and for each day row of the
 * same window (`days`, read as single days) in another currency, a row that turns its amount into
 * the converted one: the amount times (factor - 1), or times -1 where no rate is in force (left
 * out). Those rows count nothing (their counts and day_rows are 0), so the counts, and the blocks
 * that make a long window cheap, are what they would be without conversion; only the rows in other
 * currencies are read as days (through the rollups' partial indexes on rows with an amount).
 * `params` are the ones `rows` and `days` use; the factors' are added to them.
 */
function convertedRows(
  rows: SelectedRows & { signed: boolean; local: string[] },
  days: SelectedRows,
  source: RollupSource,
  conversion: Conversion,
  params: unknown[],
): WindowRows {
  const param = (value: unknown) => {
    params.push(value);
    return `$${params.length}`;
  };
  const others = [...new Set(conversion.currencies)];
  const columns = [
    "tenant_id",
    ...(source.spanned ? ["span"] : []),
    "day",
    ...source.columns,
    ...REPORT_MEASURES,
    ...(source.spanned ? ["day_rows"] : []),
    ...rows.local,
  ];
  const difference = columns.map((c) => {
    if (AMOUNTS.has(c)) return `m.${c} * (coalesce(f.factor, 0) - 1) as ${c}`;
    if (c.endsWith("_count") || c === "clicks" || c === "unique_clicks" || c === "bot_clicks")
      return `0::bigint as ${c}`;
    if (c === "day_rows") return `0 as ${c}`;
    return `m.${c}`;
  });
  return {
    from: `(select ${columns.map((c) => `m.${c}`).join(", ")} from ${rows.from} m where ${rows.where}
      union all
      select ${difference.join(", ")}
        from ${days.from} m
        left join unnest(${param(conversion.days)}::date[], ${param(conversion.currencies)}::text[], ${param(conversion.factors)}::numeric[])
          as f (day, currency, factor) on f.day = m.day and f.currency = m.currency
       where ${days.where} and m.currency <> '' and m.currency = any(${param(others)}::text[]))`,
    signed: rows.signed,
  };
}

/**
 * The rows a report reads over a window, amounts in its currency: `select(byDay, params)` as the
 * report reads them (blocks where current), plus, when some amount is in another currency, the
 * differences convertedRows adds from the same window read as days. After `params`.
 */
export function rowsInCurrency(
  select: (byDay: boolean, params: readonly unknown[]) => SelectedWindow,
  byDay: boolean,
  source: RollupSource,
  conversion: Conversion,
  params: readonly unknown[],
): SelectedWindow {
  const rows = select(byDay, params);
  if (!converts(conversion)) return rows;
  const days = select(true, rows.params);
  const converted = convertedRows(rows, days, source, conversion, days.params);
  return { ...converted, where: "m.tenant_id = $1", params: days.params, local: rows.local };
}

/** A currency whose amounts a report left out for want of a rate, with how many conversions they were. */
export interface Unconverted {
  currency: string;
  conversions: number;
}

/**
 * The conversions of the window (`from` and `where` as the report reads them, unconverted, over
 * days) whose currency had no rate on their day, by currency. Read only when some factor is missing.
 */
export async function unconvertedOf(
  db: Queryable,
  conversion: Conversion,
  read: SelectedRows & { params: unknown[] },
): Promise<Unconverted[]> {
  const missing = conversion.factors.flatMap((f, i) => (f === null ? [i] : []));
  if (missing.length === 0) return [];
  const params = [...read.params];
  params.push(
    missing.map((i) => conversion.days[i]),
    missing.map((i) => conversion.currencies[i]),
  );
  const rows = await db.query<{ currency: string; conversions: number }>(
    `select m.currency, sum(${CONVERSION_COUNTS.map((c) => `m.${c}`).join(" + ")})::float8 as conversions
       from ${read.from} m
      where ${read.where}
        and (m.day, m.currency) in (select * from unnest($${params.length - 1}::date[], $${params.length}::text[]))
      group by 1 having sum(${CONVERSION_COUNTS.map((c) => `m.${c}`).join(" + ")}) > 0
      order by 1`,
    params,
  );
  return rows.map((r) => ({ currency: r.currency, conversions: Number(r.conversions) }));
}

/** What a report's answer says of its money, time and conversions, beside `data`. */
export interface ReportMeta {
  timeZone: string;
  currency: string;
  /** The conversion statuses counted. */
  status: ConversionStatus[];
  unconverted: Unconverted[];
}

/**
 * A report's meta: the zone its days are read in, the currency its amounts are in, the statuses
 * of the conversions it counts, what was left out.
 */
export const reportMeta = (
  timeZone: string,
  currency: string,
  status: ConversionStatus[],
  unconverted: Unconverted[],
): ReportMeta => ({ timeZone, currency, status, unconverted });
