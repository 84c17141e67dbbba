import { api, unwrap } from "../../api/client";
import type { ReportMeta } from "../../currency";
import type { PerformanceQuery } from "./report-state";

export type ReportRow = Record<string, unknown>;

export interface ReportAnswer {
  rows: ReportRow[];
  pagination: { offset: number; limit: number; total: number };
  /** The currency the amounts are in, and what was left out of them. */
  meta: ReportMeta;
}

/** GET /api/v1/reports/events/performance as keyed rows (its json response type). */
export async function fetchReport(query: PerformanceQuery): Promise<ReportAnswer> {
  const answer = await unwrap(api.GET("/api/v1/reports/events/performance", { params: { query } }));
  // Asked for json, the API answers rows as objects; the table shape only when asked for it.
  const rows = Array.isArray(answer.data) ? answer.data : [];
  return { rows, pagination: answer.pagination, meta: answer.meta };
}
