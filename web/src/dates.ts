/**
 * Ranges of calendar days, as YYYY-MM-DD. Whose days they are is the caller's to say: reports read
 * them in their time zone (periods.ts finds today there); `today` and `lastDays` count UTC days
 * (an exchange rate's day is a UTC day).
 */
/** A day in milliseconds. */
export const DAY_MS = 86_400_000;
const DATE = /^\d{4}-\d{2}-\d{2}$/;

export interface DayRange {
  from: string;
  to: string;
}

const toDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);
const msOf = (day: string) => Date.parse(`${day}T00:00:00Z`);

/** A calendar day as YYYY-MM-DD (2026-02-31 is not one). */
export function isDay(value: unknown): value is string {
  if (typeof value !== "string" || !DATE.test(value)) return false;
  const ms = msOf(value);
  return !Number.isNaN(ms) && toDay(ms) === value;
}

/**
 * A filter's range of UTC days (`dateFrom`, `dateTo`, both included) from a page's address: a
 * value that is not a day is left out, and a from after the to drops both rather than being
 * refused by the API.
 */
export function dayRangeParams(search: Record<string, unknown>): { dateFrom?: string; dateTo?: string } {
  const dateFrom = isDay(search.dateFrom) ? search.dateFrom : undefined;
  const dateTo = isDay(search.dateTo) ? search.dateTo : undefined;
  if (dateFrom !== undefined && dateTo !== undefined && dateFrom > dateTo) return {};
  return { ...(dateFrom !== undefined ? { dateFrom } : {}), ...(dateTo !== undefined ? { dateTo } : {}) };
}

/** Why a chosen range of days cannot be used (`what` names it in the message), or null. */
export function rangeProblem(from: string, to: string, what: string): string | null {
  if (!isDay(from) || !isDay(to)) return `Enter both dates of the ${what}.`;
  if (from > to) return `The ${what} must start on or before its end.`;
  return null;
}

export function today(now = Date.now()): string {
  return toDay(now);
}

/** The last `days` days, today included. */
export function lastDays(days: number, now = Date.now()): DayRange {
  const to = today(now);
  return { from: toDay(msOf(to) - (days - 1) * DAY_MS), to };
}

/** Days in the range, both ends included. */
export function lengthInDays(range: DayRange): number {
  return Math.round((msOf(range.to) - msOf(range.from)) / DAY_MS) + 1;
}

/** The period of the same length that ends the day before `range` starts. */
export function previousPeriod(range: DayRange): DayRange {
  const days = lengthInDays(range);
  const to = msOf(range.from) - DAY_MS;
  return { from: toDay(to - (days - 1) * DAY_MS), to: toDay(to) };
}

/** Every day of the range, in order. */
export function daysOf(range: DayRange): string[] {
  const out: string[] = [];
  for (let ms = msOf(range.from); ms <= msOf(range.to); ms += DAY_MS) out.push(toDay(ms));
  return out;
}
