/**
 * The report beside the previous period of the same length: its window, its requests, and each
 * shown row's figures matched to the previous period's row of the same breakdown values.
 */
import { type DayRange, isDay, previousPeriod } from "../../dates.js";
import {
  type FieldName,
  MAX_LIMIT,
  type PerformanceQuery,
  type ReportClock,
  type ReportState,
  rowsQuery,
  TIME_FIELDS,
  totalsQuery,
  windowQuery,
} from "./report-state.js";

type ReportRow = Record<string, unknown>;

/**
 * The previous period of a window of whole days (a preset, or dates without times): the same
 * number of days just before it. Undefined for a window with times or an open end, which has no
 * previous period of whole days to read.
 */
export function comparisonWindow(state: ReportState, at: ReportClock): DayRange | undefined {
  const { conversionDateFrom: from, conversionDateTo: to } = windowQuery(state, at);
  if (!isDay(from) || !isDay(to) || from > to) return undefined;
  return previousPeriod({ from, to });
}

/**
 * The previous period's rows for the shown breakdowns, unpaged (up to the API's largest page), so
 * each shown row finds its match whatever page or order the table is on.
 */
export function comparisonRowsQuery(state: ReportState, at: ReportClock, window: DayRange): PerformanceQuery {
  const { sortBy: _sortBy, ...query } = rowsQuery(state, at);
  return { ...query, conversionDateFrom: window.from, conversionDateTo: window.to, offset: 0, limit: MAX_LIMIT };
}

export function comparisonTotalsQuery(state: ReportState, at: ReportClock, window: DayRange): PerformanceQuery {
  return { ...totalsQuery(state, at), conversionDateFrom: window.from, conversionDateTo: window.to };
}

/**
 * Whether rows can be matched across periods: a time breakdown's values (a day, an hour) are
 * never in both, so with one only the totals are compared.
 */
export const rowsComparable = (fields: readonly FieldName[]): boolean =>
  fields.length > 0 && !fields.some((f) => TIME_FIELDS.includes(f));

/** A row's breakdown values as one key: a catalog entry by its id, anything else by its value. */
export function rowKey(fields: readonly FieldName[], row: ReportRow): string {
  return JSON.stringify(fields.map((f) => (row[`${f}Id`] !== undefined ? row[`${f}Id`] : (row[f] ?? null))));
}

/** The previous period's rows by their key (rowKey). */
export function byKey(fields: readonly FieldName[], rows: readonly ReportRow[]): Map<string, ReportRow> {
  return new Map(rows.map((row) => [rowKey(fields, row), row]));
}
