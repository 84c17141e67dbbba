import { prepared, type Queryable } from "../../platform/db/index.js";
import { DAY_MS } from "../../platform/durations.js";
import { ApiError } from "../../platform/http/errors.js";
import { DAILY_DIMENSIONS, FACT_COLUMNS, RAW_EVENT_RETENTION_DAYS } from "../tracking/index.js";
import type { RollupSource } from "./sources.js";

/**
 * The raw events as a report's source: clicks and conversions, one row per event in a rollup's
 * shape, with every dimension a report can group on. A report reads it when no rollup has every
 * column its fields and filters need (both sub-ids; a device or sub-id beside an account, link,
 * tracker or country), or when the sub-id rollup it would read left values out of a day of its
 * window. Its cost is the window's events, so its window is bounded (RAW_WINDOW_DAYS) and must
 * start within the raw events' retention.
 */
export const RAW_EVENTS: RollupSource = {
  table: "",
  columns: new Set([...DAILY_DIMENSIONS, ...FACT_COLUMNS]),
  spanned: false,
  raw: true,
};

/** Days a report read from the raw events may span (docs/limits.md). */
export const RAW_WINDOW_DAYS = 31;

/**
 * Refuses a window a raw-events report cannot read: longer than RAW_WINDOW_DAYS days (counted as
 * 24-hour days from its first instant to its last), or starting before the raw events' retention.
 * The 400 names `param` (the window's first parameter) and says why the raw events are read
 * (`reason`, as "a breakdown by parameterA, account").
 */
export function checkRawWindow(param: string, window: { from: Date; to: Date }, now: Date, why: string): void {
  const reason = `${why} reads the raw clicks and conversions`;
  if (window.to.getTime() - window.from.getTime() >= RAW_WINDOW_DAYS * DAY_MS) {
    throw ApiError.invalid(
      param,
      `${param}: ${reason}, so its window may span at most ${RAW_WINDOW_DAYS} days ` +
        `(it spans ${window.from.toISOString()} to ${window.to.toISOString()})`,
    );
  }
  const kept = new Date(now.getTime() - RAW_EVENT_RETENTION_DAYS * DAY_MS);
  if (window.from < kept) {
    throw ApiError.invalid(
      param,
      `${param}: ${reason}, kept ${RAW_EVENT_RETENTION_DAYS} days: the window must start at ` +
        `${kept.toISOString()} or later (it starts at ${window.from.toISOString()})`,
    );
  }
}

/** Whether a sub-id rollup left a value out of a UTC day of the window (sub_id_rollup_gaps). */
export async function hasGaps(
  db: Queryable,
  tenantId: string,
  source: RollupSource,
  window: { from: Date; to: Date },
): Promise<boolean> {
  if (source.gaps === undefined) return false;
  const [row] = await db.query<{ gap: boolean }>(GAPS, [
    tenantId,
    source.gaps,
    window.from.toISOString().slice(0, 10),
    window.to.toISOString().slice(0, 10),
  ]);
  return row?.gap === true;
}

const GAPS = prepared(
  "reports.sub-id-gaps",
  `select exists (select 1 from sub_id_rollup_gaps
                   where tenant_id = $1 and parameter = $2 and day between $3::date and $4::date) as gap`,
);
