import { api, unwrap } from "../../api/client";
import type { DayRange } from "../../dates";
import { comparisonRowsQuery, comparisonTotalsQuery } from "./comparison";
import { fetchReport } from "./fetch-report";
import {
  chartQuery,
  type FieldName,
  type ReportClock,
  type ReportState,
  rowsQuery,
  type StatName,
  totalsQuery,
} from "./report-state";

/**
 * Every report answer of this page starts with it: a new reporting currency or exchange rate asks
 * them again (invalidateReports in currency.ts names it among the money queries).
 */
const PERFORMANCE = ["performance"] as const;

/** The table's rows: the breakdowns, sorted and paged by the API. */
export const reportRowsQuery = (state: ReportState, at: ReportClock) => ({
  queryKey: [...PERFORMANCE, "rows", rowsQuery(state, at)],
  queryFn: () => fetchReport(rowsQuery(state, at)),
});

/** The totals row (asked for only beside breakdowns: without them the table's one row is the total). */
export const reportTotalsQuery = (state: ReportState, at: ReportClock) => ({
  queryKey: [...PERFORMANCE, "totals", totalsQuery(state, at)],
  queryFn: () => fetchReport(totalsQuery(state, at)),
});

/** The previous period's rows; asked for only when there is a `window` to compare with. */
export const previousRowsQuery = (state: ReportState, at: ReportClock, window: DayRange | undefined) => ({
  queryKey: [...PERFORMANCE, "previous-rows", window && comparisonRowsQuery(state, at, window)],
  queryFn: () => fetchReport(comparisonRowsQuery(state, at, window ?? { from: "", to: "" })),
});

export const previousTotalsQuery = (state: ReportState, at: ReportClock, window: DayRange | undefined) => ({
  queryKey: [...PERFORMANCE, "previous-totals", window && comparisonTotalsQuery(state, at, window)],
  queryFn: () => fetchReport(comparisonTotalsQuery(state, at, window ?? { from: "", to: "" })),
});

/** The chart's points; asked for only with a time breakdown (`time`). */
export const reportChartQuery = (
  state: ReportState,
  at: ReportClock,
  time: FieldName | undefined,
  stat: StatName,
  split: FieldName | undefined,
) => ({
  queryKey: [...PERFORMANCE, "chart", time && chartQuery(state, at, time, stat, split)],
  queryFn: () => fetchReport(chartQuery(state, at, time ?? "date", stat, split)),
});

export type SavedReportKind = "performance" | "accounts" | "links";

// One page covers the tenant's cap (docs/limits.md) for most tenants; the list is by name.
const LIST_LIMIT = 100;

/** The saved reports of one kind, by name; a save, rename or delete refreshes them by this key. */
export const savedReportsQuery = (kind: SavedReportKind) => ({
  queryKey: ["saved-reports", kind],
  queryFn: async () =>
    (await unwrap(api.GET("/api/v1/saved-reports", { params: { query: { report: kind, limit: LIST_LIMIT } } }))).data,
});
