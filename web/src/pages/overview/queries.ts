import { api, unwrap } from "../../api/client";
import type { ReportMeta } from "../../currency";
import { type DayRange, daysOf } from "../../dates";
import { presetRange } from "../../periods";
import type { OverviewSearch } from "../../router";

// Signups and first-time deposits are cards of their own: one "Conversions" figure read the
// report's `signups` alone, so deposits never showed on the overview.
export const STATS = ["clicks", "signups", "firstTimeDeposit", "commission", "conversionRate"] as const;
export type Stat = (typeof STATS)[number];
type Totals = Record<Stat, number>;

/** The overview's period: the address's days, else the last 30 days of `zone`. */
export function overviewRange(search: OverviewSearch, zone: string, now: number): DayRange {
  return search.from && search.to ? { from: search.from, to: search.to } : presetRange("30d", zone, now);
}

const num = (value: unknown) => (typeof value === "number" ? value : Number(value ?? 0) || 0);

/**
 * The performance report's totals over a range of `zone`'s days (no breakdown: one row, or none
 * without traffic), in `currency` (none: the tenant's reporting currency), with what the amounts
 * and days are in.
 */
async function totals(
  range: DayRange,
  zone: string,
  currency: string | undefined,
): Promise<{ totals: Totals; meta: ReportMeta }> {
  const answer = await unwrap(
    api.GET("/api/v1/reports/events/performance", {
      params: {
        query: {
          stats: STATS.join(","),
          conversionDateFrom: range.from,
          conversionDateTo: range.to,
          timeZone: zone,
          ...(currency ? { currency } : {}),
        },
      },
    }),
  );
  const row = Array.isArray(answer.data) ? (answer.data[0] ?? {}) : {};
  return {
    totals: Object.fromEntries(STATS.map((s) => [s, num((row as Record<string, unknown>)[s])])) as Totals,
    meta: answer.meta,
  };
}

interface DailyPoint {
  day: string;
  clicks: number;
  signups: number;
}

/** Clicks and signups per day of `zone`; days without traffic are zero (the report leaves them out). */
async function daily(range: DayRange, zone: string): Promise<DailyPoint[]> {
  const answer = await unwrap(
    api.GET("/api/v1/reports/events/performance", {
      params: {
        query: {
          fields: "date",
          stats: "clicks,signups",
          conversionDateFrom: range.from,
          conversionDateTo: range.to,
          timeZone: zone,
          limit: 999,
        },
      },
    }),
  );
  const byDay = new Map<string, Record<string, unknown>>();
  if (Array.isArray(answer.data)) for (const row of answer.data) byDay.set(String(row.date), row);
  return daysOf(range).map((day) => ({
    day,
    clicks: num(byDay.get(day)?.clicks),
    signups: num(byDay.get(day)?.signups),
  }));
}

/**
 * The overview's figures are report answers: their first keys are among the money queries a new
 * currency or exchange rate asks again (invalidateReports in currency.ts).
 */
export const totalsQuery = (range: DayRange, zone: string, currency: string | undefined) => ({
  queryKey: ["totals", range, zone, currency],
  queryFn: () => totals(range, zone, currency),
});

export const dailyQuery = (range: DayRange, zone: string) => ({
  queryKey: ["daily", range, zone],
  queryFn: () => daily(range, zone),
});
