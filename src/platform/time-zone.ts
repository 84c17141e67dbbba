/**
 * IANA time zones: checking a name, and moving between instants and wall times in a zone. The
 * offsets come from the runtime's time-zone data (ICU); the database applies the same IANA rules
 * when it groups events by local day or hour.
 */

import { ApiError } from "./http/errors.js";

export const UTC = "UTC";

// IANA names are letters, digits, `_`, `-` and `+` in `/`-separated parts ("America/New_York",
// "Etc/GMT+5"). Offsets ("+05:30") and POSIX rules are refused: PostgreSQL reads a bare offset
// with the opposite sign of ISO 8601.
const NAME = /^[A-Za-z][A-Za-z0-9_+-]*(\/[A-Za-z0-9_+-]+)*$/;

/** Formatters by zone name. The names are checked IANA names, at most about 600 of them. */
const formatters = new Map<string, Intl.DateTimeFormat>();
const MAX_FORMATTERS = 1_000;

function formatter(zone: string): Intl.DateTimeFormat {
  let found = formatters.get(zone);
  if (found === undefined) {
    found = new Intl.DateTimeFormat("en-US", {
      timeZone: zone,
      hourCycle: "h23",
      year: "numeric",
      month: "2-digit",
      day: "2-digit",
      hour: "2-digit",
      minute: "2-digit",
      second: "2-digit",
    });
    if (formatters.size >= MAX_FORMATTERS) formatters.clear();
    formatters.set(zone, found);
  }
  return found;
}

/** The zones the runtime lists, by their name in lower case. */
let listed: Map<string, string> | undefined;

/**
 * The IANA name of the zone `value` names, in any case, or null when it names none. A name the
 * runtime lists keeps its listed spelling ("asia/tokyo" gives "Asia/Tokyo"); an alias it knows
 * but does not list keeps the caller's ("Asia/Kolkata", listed as "Asia/Calcutta" by older ICU
 * data); UTC and its aliases give "UTC". The same name is then read by the database.
 */
export function timeZoneName(value: string): string | null {
  if (value.length > 64 || !NAME.test(value)) return null;
  listed ??= new Map(Intl.supportedValuesOf("timeZone").map((zone) => [zone.toLowerCase(), zone]));
  let resolved: string;
  try {
    resolved = new Intl.DateTimeFormat("en-US", { timeZone: value }).resolvedOptions().timeZone;
  } catch {
    return null;
  }
  if (resolved === "UTC" || resolved === "Etc/UTC" || resolved === "Etc/GMT") return UTC;
  return listed.get(value.toLowerCase()) ?? value;
}

/** timeZoneName of a parameter or field's value, or a 400 naming `field`. */
export function requireTimeZone(field: string, value: string): string {
  const zone = timeZoneName(value.trim());
  if (zone === null) {
    throw ApiError.validation(field, `must be an IANA time zone name such as Europe/Berlin or UTC, got '${value}'`);
  }
  return zone;
}

/**
 * The wall time of `ms` in `zone`, as milliseconds since 1970 read as if it were UTC. For the
 * instants a date parameter may name (years 0001 to 9999).
 */
function wallOf(ms: number, zone: string): number {
  const parts: Record<string, string> = {};
  for (const part of formatter(zone).formatToParts(new Date(ms))) parts[part.type] = part.value;
  const wall = new Date(0);
  // setUTCFullYear, not Date.UTC, which reads years 0 to 99 as 1900 to 1999.
  wall.setUTCFullYear(Number(parts.year), Number(parts.month) - 1, Number(parts.day));
  wall.setUTCHours(Number(parts.hour), Number(parts.minute), Number(parts.second), ((ms % 1000) + 1000) % 1000);
  return wall.getTime();
}

/** The zone's offset from UTC at the instant `ms`, in milliseconds (east positive). */
export function offsetAt(ms: number, zone: string): number {
  return zone === UTC ? 0 : wallOf(ms, zone) - ms;
}

const DAY = 86_400_000;

/**
 * The instant at which the wall clock of `zone` shows `wall` (milliseconds read as UTC). A wall
 * time that a change of offset skips (a DST gap) moves forward by the gap; one it repeats takes
 * the earlier instant. Offsets are sampled a day either side: zones change offset at most once
 * in two days.
 */
export function instantOfWall(wall: number, zone: string): number {
  if (zone === UTC) return wall;
  const before = offsetAt(wall - DAY, zone);
  const after = offsetAt(wall + DAY, zone);
  const fits = [before, after].map((o) => wall - o).filter((t) => offsetAt(t, zone) === wall - t);
  if (fits.length > 0) return Math.min(...fits);
  return wall - before;
}

/** The local day (YYYY-MM-DD) of the instant `ms` in `zone`. */
export function localDay(ms: number, zone: string): string {
  return new Date(wallOf(ms, zone)).toISOString().slice(0, 10);
}

/** The first instant of the local day `day` (YYYY-MM-DD) in `zone`. */
function startOfLocalDay(day: string, zone: string): number {
  return instantOfWall(Date.parse(`${day}T00:00:00.000Z`), zone);
}

/** The local day `days` after `day` (YYYY-MM-DD; negative goes back). */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00.000Z`) + days * DAY).toISOString().slice(0, 10);
}

/** The instants of the local day `day` in `zone`: its first and its last millisecond. */
export function localDayBounds(day: string, zone: string): { from: Date; to: Date } {
  return { from: new Date(startOfLocalDay(day, zone)), to: new Date(startOfLocalDay(addDays(day, 1), zone) - 1) };
}
