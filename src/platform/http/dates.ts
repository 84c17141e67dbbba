import { Type } from "typebox";
import { instantOfWall, localDayBounds, UTC } from "../time-zone.js";
import { ApiError } from "./errors.js";

const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;
// A date-time whose `+` offset arrived unencoded in a query string, decoded as a space.
const DECODED_PLUS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?) (\d{2}:?\d{2})$/;
const DATE_TIME = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/;
// A date-time without an offset: a wall time, read in the request's time zone.
const WALL_TIME = /^(\d{4})-(\d{2})-(\d{2})T(\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,6}))?)?$/;

/** A date (`2026-11-01`, the whole UTC day) or an ISO 8601 date-time; both ends inclusive. */
export const DateParam = Type.String({
  description:
    "A date (2026-11-01: the whole day, in timeZone where the route takes one, else in UTC), a date-time with Z or an offset (that instant), or a date-time without one (wall time in that zone); inclusive",
  examples: ["2026-11-01"],
});

/** The zone a request's plain dates and wall times are read in; the tenant's timeZone setting when absent. */
export const TimeZoneParam = Type.String({
  maxLength: 64,
  description:
    "IANA time zone (e.g. America/New_York): plain dates are whole local days and date-times without an offset wall times there; default the timeZone setting",
  examples: ["Europe/Berlin"],
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
 * A wall time without an offset (`2026-11-01T09:30`) on a real day, as milliseconds read as UTC;
 * null when `value` is not one. Hours 00 to 23, minutes and seconds 00 to 59.
 */
function wallTime(value: string): number | null {
  const m = WALL_TIME.exec(value);
  if (m === null || !isRealDate(value.slice(0, 10))) return null;
  const [hour, minute, second] = [Number(m[4]), Number(m[5]), Number(m[6] ?? 0)];
  if (hour > 23 || minute > 59 || second > 59) return null;
  const wall = new Date(`${value.slice(0, 10)}T00:00:00.000Z`);
  wall.setUTCHours(hour, minute, second, Number((m[7] ?? "").padEnd(3, "0").slice(0, 3)));
  return wall.getTime();
}

/**
 * Reads a date bound in a time zone (IANA, checked by the caller; UTC when not given): a date-only
 * `from` is the first instant of that local day, a date-only `to` the last millisecond of it; a
 * date-time with `Z` or an offset is that instant; one without is wall time in the zone (a time a
 * DST change skips moves forward by the gap, one it repeats takes the earlier instant). A bad
 * value is a 400 naming the parameter, and so is a real date the database cannot hold (before
 * 0001-01-01 or after 9999-12-31 UTC). An offset whose `+` came unencoded in the query string (so
 * decoded as a space) is read as `+`.
 */
export function parseDateBound(
  name: string,
  raw: string | undefined,
  end: "from" | "to",
  zone: string = UTC,
): Date | undefined {
  if (raw === undefined) return undefined;
  const value = raw.replace(DECODED_PLUS, "$1+$2");
  const isDate = DATE_ONLY.test(value);
  const isWall = WALL_TIME.test(value);
  if (!isDate && !isWall && !DATE_TIME.test(value)) {
    throw ApiError.validation(
      name,
      `must be a date (YYYY-MM-DD) or an ISO 8601 date-time (YYYY-MM-DDTHH:MM[:SS], with Z or an offset for an instant, without one for wall time in the time zone), got '${value}'`,
    );
  }
  let bound: Date;
  if (isDate) {
    if (!isRealDate(value)) throw ApiError.validation(name, `is not a real date: '${value}'`);
    const day = localDayBounds(value, zone);
    bound = end === "from" ? day.from : day.to;
  } else if (isWall) {
    const wall = wallTime(value);
    if (wall === null) throw ApiError.validation(name, `is not a real date and time: '${value}'`);
    bound = new Date(instantOfWall(wall, zone));
  } else {
    bound = new Date(value);
    if (Number.isNaN(bound.getTime()) || !isRealDate(value.slice(0, 10))) {
      throw ApiError.validation(name, `is not a real date: '${value}'`);
    }
  }
  if (Number.isNaN(bound.getTime()) || !inRange(bound)) {
    throw ApiError.validation(name, `must be from 0001-01-01 to 9999-12-31 (UTC), got '${value}'`);
  }
  return bound;
}

/** Both bounds of a window (parseDateBound), `to` not before `from`. */
export function parseDateRange(
  names: [string, string],
  from: string | undefined,
  to: string | undefined,
  zone: string = UTC,
): { from: Date | undefined; to: Date | undefined } {
  const start = parseDateBound(names[0], from, "from", zone);
  const stop = parseDateBound(names[1], to, "to", zone);
  if (start && stop && start > stop) throw ApiError.validation(names[1], `must not be before ${names[0]}`);
  return { from: start, to: stop };
}
