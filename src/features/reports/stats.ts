/**
 * The stats every report can show, as SQL over a source aliased `m` that has the daily rollup's
 * measure columns. Derived stats are computed from the summed parts, never by averaging
 * averages, so a total row is right whatever the breakdown.
 */

import { REPORT_MEASURES } from "../tracking/rollups.js";

export interface StatDef {
  name: string;
  aliases: string[];
  description: string;
  /** SQL aggregate over `m`, yielding a float8. */
  sql: string;
  /** May sort the composite endpoints (spec part 2's sortable columns). */
  compositeSort: boolean;
}

const COMMISSION = "(sum(m.cpa_amount) + sum(m.revshare_amount) + sum(m.flatfee_amount))";

// Counts are summed as float8, whose by-value sum is much cheaper than bigint's: exact, as every
// partial sum is an integer below 2^53.
const count = (column: string) => `coalesce(sum(m.${column}::float8), 0)`;
const amount = (column: string) => `coalesce(round(sum(m.${column}), 4), 0)::float8`;

export const STATS: StatDef[] = [
  {
    name: "clicks",
    aliases: [],
    description: "Clicks (bots and HEAD requests excluded)",
    sql: count("clicks"),
    compositeSort: true,
  },
  {
    name: "uniqueClicks",
    aliases: [],
    description: "First clicks of a visitor (IP + user agent) on a link and traffic source in a UTC day",
    sql: count("unique_clicks"),
    compositeSort: false,
  },
  { name: "signups", aliases: [], description: "Signup conversions", sql: count("signup_count"), compositeSort: true },
  {
    name: "firstTimeDeposit",
    aliases: ["ftd"],
    description: "FirstTimeDeposit conversions",
    sql: count("ftd_count"),
    compositeSort: true,
  },
  {
    name: "qualifiers",
    aliases: [],
    description: "Qualifier conversions",
    sql: count("qualifier_count"),
    compositeSort: true,
  },
  {
    name: "deposits",
    aliases: [],
    description: "Deposit conversions",
    sql: count("deposit_count"),
    compositeSort: false,
  },
  {
    name: "depositAmount",
    aliases: [],
    description: "Sum of the values of Deposit conversions",
    sql: amount("deposit_amount"),
    compositeSort: false,
  },
  {
    name: "cpaCommission",
    aliases: [],
    description: "Sum of CpaCommission values",
    sql: amount("cpa_amount"),
    compositeSort: true,
  },
  {
    name: "revShareCommission",
    aliases: [],
    description: "Sum of RevShareCommission values (negative when reversed)",
    sql: amount("revshare_amount"),
    compositeSort: true,
  },
  {
    name: "flatFeeCommission",
    aliases: [],
    description: "Sum of FlatFeeCommission values",
    sql: amount("flatfee_amount"),
    compositeSort: true,
  },
  {
    name: "commission",
    aliases: [],
    description: "cpaCommission + revShareCommission + flatFeeCommission",
    sql: `coalesce(round(${COMMISSION}, 4), 0)::float8`,
    compositeSort: true,
  },
  {
    name: "conversionRate",
    aliases: [],
    description: "signups / clicks (0 without clicks), 4 decimals",
    sql: "coalesce(round(sum(m.signup_count)::numeric / nullif(sum(m.clicks), 0), 4), 0)::float8",
    compositeSort: false,
  },
  {
    name: "epc",
    aliases: [],
    description: "Earnings per click: commission / clicks (0 without clicks), 4 decimals",
    sql: `coalesce(round(${COMMISSION} / nullif(sum(m.clicks), 0), 4), 0)::float8`,
    compositeSort: false,
  },
];

/** The measure columns of the rollups the stats read (every rollup table keeps them). */
export const MEASURES = REPORT_MEASURES;

const BY_NAME = new Map<string, StatDef>(
  STATS.flatMap((s) => [[s.name.toLowerCase(), s], ...s.aliases.map((a) => [a.toLowerCase(), s] as [string, StatDef])]),
);

/** A stat by its name or alias, any case. */
export function findStat(name: string): StatDef | undefined {
  return BY_NAME.get(name.toLowerCase());
}

/** `stat AS "name"` for each stat, over `m`. */
export function statColumns(stats: readonly StatDef[]): string {
  return stats.map((s) => `${s.sql} as "${s.name}"`).join(", ");
}
