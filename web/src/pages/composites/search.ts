import { type DayRange, isDay, previousPeriod } from "../../dates.js";
import { presetRange } from "../../periods.js";
import { compact, currencyParam, positiveIntParam, textParam, timeZoneParam } from "../../search-params.js";

/** The metrics the composite endpoints sort by (their `sortBy` list), and `name`. */
export const SORT_KEYS = [
  "name",
  "clicks",
  "signups",
  "firstTimeDeposit",
  "qualifiers",
  "cpaCommission",
  "revShareCommission",
  "flatFeeCommission",
  "commission",
] as const;
export type SortKey = (typeof SORT_KEYS)[number];
export type Direction = "asc" | "desc";

export const PAGE_SIZE = 25;
const DEFAULT_SORT: SortKey = "clicks";
const STATUSES = ["active", "inactive"] as const;
export type AccountStatus = (typeof STATUSES)[number];

/**
 * What an accounts or links page shows, all in its URL so a view can be shared. Absent keys
 * take their defaults: the last 30 days of the account's time zone, compared with the 30
 * before, most clicks first.
 */
export interface CompositeSearch {
  from?: string;
  to?: string;
  /** A custom comparison period; without it, the previous period of the same length. */
  compareFrom?: string;
  compareTo?: string;
  sort?: SortKey;
  dir?: Direction;
  q?: string;
  status?: AccountStatus;
  offset?: number;
  /** The currency amounts are shown in (ISO 4217); absent: the tenant's reporting currency. */
  currency?: string;
  /** The zone the days are read in (IANA); absent: the account's `timeZone` setting. */
  tz?: string;
}

const isSortKey = (value: unknown): value is SortKey =>
  typeof value === "string" && (SORT_KEYS as readonly string[]).includes(value);

const isRange = (from: unknown, to: unknown): boolean => isDay(from) && isDay(to) && from <= to;

/** The search params as the URL gives them, kept only where they make sense. */
export function parseCompositeSearch(raw: Record<string, unknown>): CompositeSearch {
  const out: CompositeSearch = {};
  if (isRange(raw.from, raw.to)) {
    out.from = raw.from as string;
    out.to = raw.to as string;
  }
  if (isRange(raw.compareFrom, raw.compareTo)) {
    out.compareFrom = raw.compareFrom as string;
    out.compareTo = raw.compareTo as string;
  }
  if (isSortKey(raw.sort)) out.sort = raw.sort;
  if (raw.dir === "asc" || raw.dir === "desc") out.dir = raw.dir;
  // A search the API would refuse (over 200 characters) is cut, not sent.
  const q = textParam(raw.q, 200);
  if (q !== undefined) out.q = q;
  if (raw.status === "active" || raw.status === "inactive") out.status = raw.status;
  const offset = positiveIntParam(raw.offset);
  if (offset !== undefined) out.offset = offset;
  const currency = currencyParam(raw.currency);
  if (currency !== undefined) out.currency = currency;
  const tz = timeZoneParam(raw.tz);
  if (tz !== undefined) out.tz = tz;
  return out;
}

export interface Periods {
  range: DayRange;
  comparison: DayRange;
  /** Whether the comparison is the previous period (not one chosen). */
  previous: boolean;
}

/** The periods a search asks for; without one, the last 30 days of `zone` (the page's time zone). */
export function periodsOf(search: CompositeSearch, zone: string, now = Date.now()): Periods {
  const range = search.from && search.to ? { from: search.from, to: search.to } : presetRange("30d", zone, now);
  if (search.compareFrom && search.compareTo) {
    return { range, comparison: { from: search.compareFrom, to: search.compareTo }, previous: false };
  }
  return { range, comparison: previousPeriod(range), previous: true };
}

export interface SortState {
  by: SortKey;
  direction: Direction;
}

/** Metrics sort highest first and names A to Z unless the URL says otherwise. */
export function sortOf(search: CompositeSearch): SortState {
  const by = search.sort ?? DEFAULT_SORT;
  return { by, direction: search.dir ?? (by === "name" ? "asc" : "desc") };
}

/** The API's `sortBy`: `name`/`-name`; a metric highest first as itself, lowest first as `+metric`. */
export function sortByParam(sort: SortState): string {
  if (sort.by === "name") return sort.direction === "asc" ? "name" : "-name";
  return sort.direction === "asc" ? `+${sort.by}` : sort.by;
}

/**
 * The composite endpoints' query for what the URL asks (one page of the whole filtered set). The
 * days are `zone`'s, which is always named, so what they mean never depends on a setting read elsewhere.
 */
export function compositeQuery(search: CompositeSearch, zone: string, now = Date.now()) {
  const { range, comparison } = periodsOf(search, zone, now);
  return {
    metricsFrom: range.from,
    metricsTo: range.to,
    comparisonFrom: comparison.from,
    comparisonTo: comparison.to,
    sortBy: sortByParam(sortOf(search)),
    offset: search.offset ?? 0,
    limit: PAGE_SIZE,
    ...(search.q ? { search: search.q } : {}),
    ...(search.status ? { status: search.status } : {}),
    ...(search.currency ? { currency: search.currency } : {}),
    timeZone: zone,
  };
}

/** The period, zone and currency of a search, carried from the accounts to an account's links and back. */
export function periodSearch(search: CompositeSearch): CompositeSearch {
  const out: CompositeSearch = search.currency ? { currency: search.currency } : {};
  if (search.tz) out.tz = search.tz;
  if (search.from && search.to) {
    out.from = search.from;
    out.to = search.to;
  }
  if (search.compareFrom && search.compareTo) {
    out.compareFrom = search.compareFrom;
    out.compareTo = search.compareTo;
  }
  return out;
}

/** The search with `change` applied; anything but paging starts at the first page again. */
export function changed(
  search: CompositeSearch,
  change: { [K in keyof CompositeSearch]?: CompositeSearch[K] | undefined },
): CompositeSearch {
  const { offset: _offset, ...rest } = search;
  return compact<CompositeSearch>({ ...rest, ...change });
}

/** The search with the period chosen: a custom comparison, or none (the previous period). */
export function withPeriod(
  search: CompositeSearch,
  choice: { from: string; to: string; compare?: { from: string; to: string } },
): CompositeSearch {
  return changed(search, {
    from: choice.from,
    to: choice.to,
    compareFrom: choice.compare?.from,
    compareTo: choice.compare?.to,
  });
}
