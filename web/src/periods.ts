/**
 * The periods the dashboard offers (today, yesterday, this month, last month, the last 7, 30 or
 * 90 days) as days where the chosen zone's clock is, not the browser's. The API reads a plain
 * date (YYYY-MM-DD) as the whole local day in the request's `timeZone`, so these go out as dates
 * with that zone. No imports but a type, so the logic tests load it as it is.
 */
import type { DayRange } from "./dates.js";

export const PERIOD_PRESETS = ["today", "yesterday", "thisMonth", "lastMonth", "7d", "30d", "90d"] as const;
export type PeriodPreset = (typeof PERIOD_PRESETS)[number];

export const PRESET_LABELS: Record<PeriodPreset, string> = {
  today: "Today",
  yesterday: "Yesterday",
  thisMonth: "This month",
  lastMonth: "Last month",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  "90d": "Last 90 days",
};

const DAY_MS = 86_400_000;

/** Formatters by zone: making one costs far more than using it, and a page asks on every render. */
const formatters = new Map<string, Intl.DateTimeFormat | null>();

/** The zone's formatter, or null for a name this browser cannot read (the API's to refuse, by name). */
function formatter(zone: string): Intl.DateTimeFormat | null {
  let found = formatters.get(zone);
  if (found === undefined) {
    try {
      found = new Intl.DateTimeFormat("en-US", {
        timeZone: zone,
        calendar: "gregory",
        numberingSystem: "latn",
        hourCycle: "h23",
        year: "numeric",
        month: "2-digit",
        day: "2-digit",
        hour: "2-digit",
        minute: "2-digit",
        second: "2-digit",
      });
    } catch {
      found = null;
    }
    formatters.set(zone, found);
  }
  return found;
}

/** Whether this browser can read `zone` (an IANA name, any case). */
export const isReadableZone = (zone: string): boolean => formatter(zone) !== null;

const pad = (n: number, width = 2) => String(n).padStart(width, "0");

/**
 * The wall clock of `zone` at the instant `ms`, as `YYYY-MM-DDTHH:MM:SS`. A zone this browser
 * cannot read is taken as UTC: the request that names it is refused by the API, which says why
 * beside the picker, and until then the page still has a window to show.
 */
export function wallTime(ms: number, zone: string): string {
  const format = formatter(zone);
  if (!format) return new Date(ms).toISOString().slice(0, 19);
  const parts: Partial<Record<Intl.DateTimeFormatPartTypes, string>> = {};
  for (const part of format.formatToParts(new Date(ms))) parts[part.type] = part.value;
  const n = (type: Intl.DateTimeFormatPartTypes) => Number(parts[type] ?? 0);
  return `${pad(n("year"), 4)}-${pad(n("month"))}-${pad(n("day"))}T${pad(n("hour"))}:${pad(n("minute"))}:${pad(n("second"))}`;
}

/** Today's date where `zone`'s clock is (YYYY-MM-DD): in Tokyo it is tomorrow before New York's day ends. */
export const localToday = (zone: string, now = Date.now()): string => wallTime(now, zone).slice(0, 10);

/** The calendar day `days` after `day` (negative goes back); days, not hours, so DST does not enter. */
export function addDays(day: string, days: number): string {
  return new Date(Date.parse(`${day}T00:00:00Z`) + days * DAY_MS).toISOString().slice(0, 10);
}

/** The first day of the month `months` after the month of `day` (negative goes back). */
function monthStart(day: string, months: number): string {
  const date = new Date(Date.parse(`${day.slice(0, 7)}-01T00:00:00Z`));
  date.setUTCMonth(date.getUTCMonth() + months);
  return date.toISOString().slice(0, 10);
}

/** The days a preset stands for in `zone` at `now`, both ends included; this month ends today. */
export function presetRange(preset: PeriodPreset, zone: string, now = Date.now()): DayRange {
  const today = localToday(zone, now);
  switch (preset) {
    case "today":
      return { from: today, to: today };
    case "yesterday":
      return { from: addDays(today, -1), to: addDays(today, -1) };
    case "thisMonth":
      return { from: monthStart(today, 0), to: today };
    case "lastMonth":
      return { from: monthStart(today, -1), to: addDays(monthStart(today, 0), -1) };
    case "7d":
      return { from: addDays(today, -6), to: today };
    case "30d":
      return { from: addDays(today, -29), to: today };
    case "90d":
      return { from: addDays(today, -89), to: today };
  }
}
