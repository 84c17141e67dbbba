import { DAY_MS } from "../../platform/durations.js";
import { EARLIEST_INSTANT, parseDateBound } from "../../platform/http/dates.js";
import { ApiError } from "../../platform/http/errors.js";
import { addDays, localDay, localDayBounds, requireTimeZone, UTC } from "../../platform/time-zone.js";

/** One parameter of a report, as the HTTP query, the OpenAPI document and the MCP tools see it. */
export type ParamDef = {
  name: string;
  description: string;
} & (
  | { kind: "list" }
  | { kind: "date"; end: "from" | "to" }
  | { kind: "integer"; min: number; max: number; default: number }
  | { kind: "enum"; values: readonly string[]; default?: string }
  | { kind: "text"; maxLength: number }
  | { kind: "zone" }
  | { kind: "id" }
);

export type ParamValue = string | number | string[] | Date | undefined;

/** The currency a report's amounts are in, for one request (the settings' reportingCurrency otherwise). */
export const CURRENCY_PARAM: ParamDef = {
  name: "currency",
  kind: "text",
  maxLength: 10,
  description:
    "ISO 4217 code the amounts are shown in, each converted at the rate of its event's UTC day; default the reportingCurrency setting",
};

/** The time zone a report reads days in, for one request (the settings' timeZone otherwise). */
export const TIME_ZONE_PARAM: ParamDef = {
  name: "timeZone",
  kind: "zone",
  description:
    "IANA time zone (e.g. America/New_York) in which plain dates are whole local days, wall times are read, and date, week, month and hour rows are local; default the timeZone setting",
};

function one(raw: unknown, name: string, kind: ParamDef["kind"]): string | number | undefined {
  // A list may come as an array (MCP clients send JSON); elsewhere a repeated query parameter's last value wins.
  const value = Array.isArray(raw) ? (kind === "list" ? raw.map(String).join(",") : raw[raw.length - 1]) : raw;
  if (value === undefined || value === null || value === "") return undefined;
  if (typeof value === "number") return value;
  if (typeof value === "string") return value;
  throw ApiError.validation(name, "must be a string or a number");
}

function integer(value: string | number, name: string, min: number, max: number): number {
  const n = typeof value === "number" ? value : /^-?\d+$/.test(value.trim()) ? Number(value) : Number.NaN;
  if (!Number.isSafeInteger(n) || n < min || n > max) {
    throw ApiError.validation(name, `must be an integer from ${min} to ${max}, got '${value}'`);
  }
  return n;
}

function parseOne(def: ParamDef, raw: unknown, zone: string): ParamValue {
  const value = one(raw, def.name, def.kind);
  switch (def.kind) {
    case "list": {
      if (value === undefined) return undefined;
      const items = String(value)
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "");
      return items.length === 0 ? undefined : items;
    }
    case "date":
      return value === undefined ? undefined : parseDateBound(def.name, String(value), def.end, zone);
    case "zone":
      return value === undefined ? zone : requireTimeZone(def.name, String(value));
    case "integer":
      return value === undefined ? def.default : integer(value, def.name, def.min, def.max);
    case "id":
      return value === undefined ? undefined : integer(value, def.name, 1, Number.MAX_SAFE_INTEGER);
    case "enum": {
      if (value === undefined) return def.default;
      const text = String(value).trim();
      const match = def.values.find((v) => v.toLowerCase() === text.toLowerCase());
      if (match === undefined)
        throw ApiError.validation(def.name, `must be one of ${def.values.join(", ")}, got '${text}'`);
      return match;
    }
    case "text": {
      if (value === undefined) return undefined;
      const text = String(value);
      if (text.length > def.maxLength)
        throw ApiError.validation(def.name, `must be at most ${def.maxLength} characters`);
      return text;
    }
  }
}

/**
 * Reads a report's parameters from a query or an MCP call: every value is checked against its
 * definition and an unknown parameter is refused, so both surfaces answer the same way. The time
 * zone (a `zone` parameter, else `zone`, the tenant's setting) is read first: the dates are read in it.
 */
export function parseParams(
  defs: readonly ParamDef[],
  raw: Record<string, unknown>,
  zone: string = UTC,
): Record<string, ParamValue> {
  const known = new Map(defs.map((d) => [d.name, d]));
  const zoneDef = defs.find((d) => d.kind === "zone");
  const readZone = zoneDef === undefined ? zone : (parseOne(zoneDef, raw[zoneDef.name], zone) as string);
  const result: Record<string, ParamValue> = {};
  for (const def of defs) result[def.name] = parseOne(def, undefined, readZone);
  for (const [name, value] of Object.entries(raw)) {
    const def = known.get(name);
    if (!def) {
      throw ApiError.validation(
        name,
        `is not a parameter of this report; known: ${defs.map((d) => d.name).join(", ")}`,
      );
    }
    result[def.name] = parseOne(def, value, readZone);
  }
  return result;
}

/**
 * The limits a report applies, from the configuration of the app running it (REPORT_MAX_WINDOW_DAYS):
 * the HTTP routes and the MCP tools pass the same ones, so both refuse the same windows.
 */
export interface ReportLimits {
  /** The most days of its time zone a window may touch. */
  maxWindowDays: number;
}

/** REPORT_MAX_WINDOW_DAYS's default: what a report runs with when its caller passes no limits. */
export const DEFAULT_REPORT_LIMITS: Readonly<ReportLimits> = Object.freeze({ maxWindowDays: 400 });

/** The local days of `zone` from..to touches (both inclusive). */
function daysSpanned(window: { from: Date; to: Date }, zone: string): number {
  const dayOf = (at: Date) => Date.parse(`${localDay(at.getTime(), zone)}T00:00:00Z`) / DAY_MS;
  return dayOf(window.to) - dayOf(window.from) + 1;
}

/**
 * A from/to pair, both inclusive, from not after to. With `fallback` (a default window), a
 * missing end takes its default: `to` the end of today, `from` the start of the local day 29 days
 * before `to`'s (in `zone`; never before the earliest date a parameter may name). Without one, both ends or neither must be given. A window
 * may touch at most `maxWindowDays` (REPORT_MAX_WINDOW_DAYS) days of its zone: what a report reads grows with its days,
 * so a longer one is refused, naming the window's last parameter and the limit.
 */
export function dateWindow(
  params: Record<string, ParamValue>,
  names: [string, string],
  fallback: { from: Date; to: Date } | null,
  maxWindowDays: number,
  zone: string = UTC,
): { from: Date; to: Date } | null {
  let from = params[names[0]] as Date | undefined;
  let to = params[names[1]] as Date | undefined;
  if (from === undefined && to === undefined) return fallback;
  if (fallback === null) {
    if (from === undefined) throw ApiError.validation(names[0], `is required when ${names[1]} is given`);
    if (to === undefined) throw ApiError.validation(names[1], `is required when ${names[0]} is given`);
  }
  if (to === undefined) {
    to = fallback?.to ?? new Date(Number.NaN);
    if (from !== undefined && from > to)
      throw ApiError.validation(names[0], `must not be after today (the default ${names[1]})`);
  }
  from ??= new Date(
    Math.max(
      localDayBounds(addDays(localDay(to.getTime(), zone), -29), zone).from.getTime(),
      EARLIEST_INSTANT.getTime(),
    ),
  );
  if (from > to) throw ApiError.validation(names[1], `must not be before ${names[0]}`);
  const days = daysSpanned({ from, to }, zone);
  if (days > maxWindowDays) {
    throw ApiError.invalid(
      names[1],
      `${names[1]}: the window may span at most ${maxWindowDays} days; ${names[0]} to ${names[1]} spans ${days} days`,
    );
  }
  return { from, to };
}

/** The last 30 local days of `zone` up to and including today: the window when none is given. */
export function last30Days(now: Date, zone: string = UTC): { from: Date; to: Date } {
  const today = localDay(now.getTime(), zone);
  return { from: localDayBounds(addDays(today, -29), zone).from, to: localDayBounds(today, zone).to };
}

/**
 * A sortBy value: a name, descending for metrics unless prefixed `+` (a `+` decoded to a space
 * is a `+`), `-` forcing descending; `name` ascends unless `-name`.
 */
export function readSort(raw: string): { key: string; direction: "asc" | "desc" | "default" } {
  const value = raw.startsWith(" ") ? `+${raw.trimStart()}` : raw.trim();
  if (value.startsWith("+")) return { key: value.slice(1).trim(), direction: "asc" };
  if (value.startsWith("-")) return { key: value.slice(1).trim(), direction: "desc" };
  return { key: value, direction: "default" };
}
