import { Type } from "typebox";
import { ApiError } from "./errors.js";

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
// A date-time whose `+` offset arrived unencoded in a query string, decoded as a space.
const DECODED_PLUS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?) (\d{2}:?\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/;

/** A date (`2026-11-01`, the whole UTC day) or an ISO 8601 date-time; both ends inclusive. */
export const DateParam = Type.String({
  description: "A date (2026-11-01, the whole UTC day) or an ISO 8601 date-time; inclusive",
  examples: ["2026-11-01"],
});

/**
 * The instants a date parameter may name: years 0001 to 9999 (UTC). PostgreSQL has no year 0000
 * and JavaScript writes years past 9999 as `+010000`, which no column parses: outside this range a
 * value would reach the database and fail there (a 500), so it is refused here, naming the
 * parameter.
 */
export const EARLIEST_INSTANT = new Date("0001-01-01T00:00:00.000Z");
export const LATEST_INSTANT = new Date("9999-12-31T23:59:59.999Z");

const inRange = (at: Date) => at.getTime() >= EARLIEST_INSTANT.getTime() && at.getTime() <= LATEST_INSTANT.getTime();

function isRealDate(ymd: string): boolean {
  const parsed = new Date(`${ymd}T00:00:00.000Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === ymd;
}

/**
 * An ISO 8601 date-time with an offset (`Z` or `+02:00`) on a day that exists, from year 0001 to
 * 9999 in UTC (EARLIEST_INSTANT..LATEST_INSTANT); null otherwise.
 */
export function parseDateTime(value: string): Date | null {
  if (!DATE_TIME.test(value) || !isRealDate(value.slice(0, 10))) return null;
  const parsed = new Date(value);
  return Number.isNaN(parsed.getTime()) || !inRange(parsed) ? null : parsed;
}

/**
 * Reads a date bound: a date-only `from` is the start of that UTC day, a date-only `to` the
 * last millisecond of it. A bad value is a 400 naming the parameter, and so is a real date the
 * database cannot hold (before 0001-01-01 or after 9999-12-31 UTC). An offset whose `+` came
 * unencoded in the query string (so decoded as a space) is read as `+`.
 */
export function parseDateBound(name: string, raw: string | undefined, end: "from" | "to"): Date | undefined {
  if (raw === undefined) return undefined;
  const value = raw.replace(DECODED_PLUS, "$1+$2");
  const isDate = DATE_ONLY.test(value);
  if (!isDate && !DATE_TIME.test(value)) {
    throw ApiError.validation(name, `must be a date (YYYY-MM-DD) or an ISO 8601 date-time, got '${value}'`);
  }
  const parsed = isDate ? new Date(`${value}T00:00:00.000Z`) : new Date(value);
  if (Number.isNaN(parsed.getTime()) || !isRealDate(value.slice(0, 10))) {
    throw ApiError.validation(name, `is not a real date: '${value}'`);
  }
  const bound = isDate && end === "to" ? new Date(parsed.getTime() + 86_400_000 - 1) : parsed;
  if (!inRange(bound)) {
    throw ApiError.validation(name, `must be from 0001-01-01 to 9999-12-31 (UTC), got '${value}'`);
  }
  return bound;
}

export function parseDateRange(
  names: [string, string],
  from: string | undefined,
  to: string | undefined,
): { from: Date | undefined; to: Date | undefined } {
  const start = parseDateBound(names[0], from, "from");
  const stop = parseDateBound(names[1], to, "to");
  if (start && stop && start > stop) throw ApiError.validation(names[1], `must not be before ${names[0]}`);
  return { from: start, to: stop };
}
