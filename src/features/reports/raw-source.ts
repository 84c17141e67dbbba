import { DAY_MS } from "../../platform/durations.js";
import { ApiError } from "../../platform/http/errors.js";
import { DAILY_DIMENSIONS, RAW_EVENT_RETENTION_DAYS } from "../tracking/index.js";
import type { RollupSource } from "./sources.js";

/**
 * The columns of a click (and of the conversions attributed to it) that no rollup keys: the
 * sub-ids, which can have a value per click. The device, OS and browser are keyed by
 * device_rollups, with brand, program and traffic source only.
 */
export const RAW_ONLY_COLUMNS = ["parameter_a", "parameter_b"] as const;

/**
 * The raw events as a report's source: clicks and conversions, one row per event in a rollup's
 * shape, with every dimension a report can group on. A report reads it when no rollup has every
 * column its fields and filters need (a sub-id breakdown; a device breakdown beside an account,
 * link, tracker or country). Its cost is the window's events, so its window is bounded
 * (RAW_WINDOW_DAYS) and must start within the raw events' retention.
 */
export const RAW_EVENTS: RollupSource = {
  table: "",
  columns: new Set([...DAILY_DIMENSIONS, "device", "os", "browser", ...RAW_ONLY_COLUMNS]),
  spanned: false,
  raw: true,
};

/** Days a report read from the raw events may span (docs/limits.md). */
export const RAW_WINDOW_DAYS = 31;

/**
 * Refuses a window a raw-events report cannot read: longer than RAW_WINDOW_DAYS days (counted as
 * 24-hour days from its first instant to its last), or starting before the raw events' retention.
 * The 400 names `param` (the window's first parameter) and why: `fields` asked for it.
 */
export function checkRawWindow(
  param: string,
  window: { from: Date; to: Date },
  now: Date,
  why: readonly string[],
): void {
  const reason = `a breakdown by ${why.join(", ")} reads the raw clicks and conversions`;
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
