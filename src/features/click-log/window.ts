import { DAY_MS } from "../../platform/durations.js";
import { ApiError } from "../../platform/http/errors.js";

/** The longest window one listing reads: a busy tenant's month of clicks, under the statement timeout. */
export const CLICK_LOG_MAX_DAYS = 31;
/** The window read when none is given. */
export const CLICK_LOG_DEFAULT_DAYS = 7;

/**
 * The instants a click listing reads, from the parsed dateFrom/dateTo: the last 7 days up to now
 * when dateFrom is absent, and at most 31 days, so a listing (and its count) reads a bounded
 * stretch of the tenant's clicks however many it has.
 */
export function clickLogWindow(from: Date | undefined, to: Date | undefined, now: Date): { from: Date; to: Date } {
  const end = to ?? now;
  const start = from ?? new Date(end.getTime() - CLICK_LOG_DEFAULT_DAYS * DAY_MS);
  if (end.getTime() - start.getTime() > CLICK_LOG_MAX_DAYS * DAY_MS) {
    throw ApiError.validation("dateFrom", `must be at most ${CLICK_LOG_MAX_DAYS} days before dateTo`);
  }
  return { from: start, to: end };
}
