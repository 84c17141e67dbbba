/**
 * The stats every report can show, as SQL over a source aliased `m` that has the daily rollup's
 * measure columns. Derived stats are computed from the summed parts, never by averaging
 * averages, so a total row is right whatever the breakdown.
 */

import { REPORT_MEASURES } from "../tracking/index.js";

export interface StatDef {
  name: string;
  aliases: string[];
  description: string;
  /** SQL over `m` yielding a float8, its measures read through `read`. */
  of(read: MeasureRead): string;
  /** May sort the composite endpoints (the `sortBy` columns of docs/reports-and-mcp.md). */
  compositeSort: boolean;
}

type Measure = (typeof REPORT_MEASURES)[number];

/**
 * How a stat reads a measure of `m`: summed over a group's rows, or as it is, on a row that is a
 * whole group already (the rows of a breakdown by conversion type are).
 */
export type MeasureRead = (column: Measure, cast?: "float8") => string;
export const SUMMED: MeasureRead = (column, cast) => `sum(m.${column}${cast === "float8" ? "::float8" : ""})`;
export const AS_IS: MeasureRead = (column, cast) => `m.${column}${cast === "float8" ? "::float8" : ""}`;

const commission = (read: MeasureRead) =>
  `(${read("cpa_amount")} + ${read("revshare_amount")} + ${read("flatfee_amount")})`;

// Counts are summed as float8, whose by-value sum is much cheaper than bigint's: exact, as every
// partial sum is an integer below 2^53.
const count = (column: Measure) => (read: MeasureRead) => `coalesce(${read(column, "float8")}, 0)`;
const amount = (column: Measure) => (read: MeasureRead) => `coalesce(round(${read(column)}, 4), 0)::float8`;

export const STATS: StatDef[] = [
  {
    name: "clicks",
    aliases: [],
    description: "Clicks (bots and HEAD requests excluded)",
    of: count("clicks"),
    compositeSort: true,
  },
  {
    name: "uniqueClicks",
    aliases: [],
    description: "First clicks of a visitor (IP + user agent) on a link and traffic source in a UTC day",
    of: count("unique_clicks"),
    compositeSort: false,
  },
  {
    name: "botClicks",
    aliases: [],
    description: "Clicks of bots: a known crawler's user agent or a data-center address (never in clicks)",
    of: count("bot_clicks"),
    compositeSort: false,
  },
  { name: "signups", aliases: [], description: "Signup conversions", of: count("signup_count"), compositeSort: true },
  {
    name: "firstTimeDeposit",
    aliases: ["ftd"],
    description: "FirstTimeDeposit conversions",
    of: count("ftd_count"),
    compositeSort: true,
  },
  {
    name: "qualifiers",
    aliases: [],
    description: "Qualifier conversions",
    of: count("qualifier_count"),
    compositeSort: true,
  },
  {
    name: "deposits",
    aliases: [],
    description: "Deposit conversions",
    of: count("deposit_count"),
    compositeSort: false,
  },
  {
    name: "depositAmount",
    aliases: [],
    description: "Sum of the values of Deposit conversions",
    of: amount("deposit_amount"),
    compositeSort: false,
  },
  {
    name: "cpaCommission",
    aliases: [],
    description: "Sum of CpaCommission values",
    of: amount("cpa_amount"),
    compositeSort: true,
  },
  {
    name: "revShareCommission",
    aliases: [],
    description: "Sum of RevShareCommission values (negative when reversed)",
    of: amount("revshare_amount"),
    compositeSort: true,
  },
  {
    name: "flatFeeCommission",
    aliases: [],
    description: "Sum of FlatFeeCommission values",
    of: amount("flatfee_amount"),
    compositeSort: true,
  },
  {
    name: "commission",
    aliases: [],
    description: "cpaCommission + revShareCommission + flatFeeCommission",
    of: (read) => `coalesce(round(${commission(read)}, 4), 0)::float8`,
    compositeSort: true,
  },
  {
    name: "conversionRate",
    aliases: [],
    description: "signups / clicks (0 without clicks), 4 decimals",
    of: (read) => `coalesce(round(${read("signup_count")}::numeric / nullif(${read("clicks")}, 0), 4), 0)::float8`,
    compositeSort: false,
  },
  {
    name: "epc",
    aliases: [],
    description: "Earnings per click: commission / clicks (0 without clicks), 4 decimals",
    of: (read) => `coalesce(round(${commission(read)} / nullif(${read("clicks")}, 0), 4), 0)::float8`,
    compositeSort: false,
  },
];

const MONEY: ReadonlySet<string> = new Set([
  "depositAmount",
  "cpaCommission",
  "revShareCommission",
  "flatFeeCommission",
  "commission",
  "epc",
]);

/** The stat sums amounts, shown in the report's currency. */
export const isMoney = (stat: StatDef): boolean => MONEY.has(stat.name);

/** The measure columns of the rollups the stats read (every rollup table keeps them). */
export const MEASURES = REPORT_MEASURES;

const BY_NAME = new Map<string, StatDef>(
  STATS.flatMap((s) => [[s.name.toLowerCase(), s], ...s.aliases.map((a) => [a.toLowerCase(), s] as [string, StatDef])]),
);

/** A stat by its name or alias, any case. */
export function findStat(name: string): StatDef | undefined {
  return BY_NAME.get(name.toLowerCase());
}

/** `stat AS "name"` for each stat, over `m` (summed over groups unless `read` says otherwise). */
export function statColumns(stats: readonly StatDef[], read: MeasureRead = SUMMED): string {
  return stats.map((s) => `${s.of(read)} as "${s.name}"`).join(", ");
}
