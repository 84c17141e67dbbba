/**
 * The performance report's state as the page's address holds it: read (and checked) from the
 * search params, written back canonically, and turned into the API's query. It imports only
 * search-params and periods (plain functions over Intl), so the logic tests can load it as it is.
 */
import { PERIOD_PRESETS, type PeriodPreset, presetRange, wallTime } from "../../periods.js";
import { currencyParam, timeZoneParam } from "../../search-params.js";

/** The report's breakdowns, as its `fields` parameter names them (docs/reports-and-mcp.md). */
export const FIELDS = [
  "date",
  "week",
  "month",
  "hour",
  "brand",
  "program",
  "account",
  "link",
  "trafficSource",
  "tracker",
  "country",
  "device",
  "os",
  "browser",
  "parameterA",
  "parameterB",
  "conversionType",
] as const;
export type FieldName = (typeof FIELDS)[number];

/** The report's stats, as its `stats` parameter names them; without `stats` the API answers them all. */
export const STATS = [
  "clicks",
  "uniqueClicks",
  "botClicks",
  "signups",
  "firstTimeDeposit",
  "qualifiers",
  "deposits",
  "depositAmount",
  "cpaCommission",
  "revShareCommission",
  "flatFeeCommission",
  "commission",
  "conversionRate",
  "epc",
] as const;
export type StatName = (typeof STATS)[number];

const STAT_ALIASES: Record<string, StatName> = { ftd: "firstTimeDeposit" };

/** The breakdowns over time: choosing one draws the chart. */
export const TIME_FIELDS: readonly FieldName[] = ["date", "week", "month", "hour"];

/** The report's filters: one id each. */
export const FILTERS = ["brandId", "programId", "accountId", "linkId", "trafficSourceId", "trackerId"] as const;
export type FilterName = (typeof FILTERS)[number];

export const PRESETS = PERIOD_PRESETS;
export type RangeChoice = PeriodPreset | "custom";
/** The API's own default window: the last 30 days of the report's zone. */
export const DEFAULT_RANGE: RangeChoice = "30d";

export const DEFAULT_LIMIT = 100;
export const MAX_LIMIT = 999;
const MAX_OFFSET = 1_000_000;

export interface ReportSort {
  key: FieldName | StatName;
  direction: "asc" | "desc";
}

export interface ReportState {
  fields: FieldName[];
  /** Empty: the API's default, every stat. */
  stats: StatName[];
  range: RangeChoice;
  /**
   * Custom ranges only, both ends inclusive: a date (YYYY-MM-DD, a whole day in the report's zone),
   * a wall time in that zone (YYYY-MM-DDTHH:MM) or an instant (a UTC date-time, from a link).
   */
  from?: string;
  to?: string;
  filters: Partial<Record<FilterName, number>>;
  /** Absent: the API's order, the fields in turn. */
  sort?: ReportSort;
  offset: number;
  limit: number;
  /** The stat the chart draws; absent: the first shown. */
  chart?: StatName;
  /** The currency amounts are shown in (ISO 4217); absent: the tenant's reporting currency. */
  currency?: string;
  /** The zone days and hours are read in (IANA); absent: the account's `timeZone` setting. */
  timeZone?: string;
  /** Each figure beside the previous period's of the same length (`compare=previous`). */
  compare?: "previous";
}

/** The search params this page reads. */
const SEARCH_KEYS = [
  "fields",
  "stats",
  "range",
  "from",
  "to",
  ...FILTERS,
  "sortBy",
  "offset",
  "limit",
  "chart",
  "currency",
  "tz",
  "compare",
] as const;

/**
 * The search params as the router holds them: numbers as numbers, so they read `brandId=3`. The
 * router keeps what it was given, checked or not, so that the page can name what it left out.
 */
export type ReportSearch = Partial<Record<(typeof SEARCH_KEYS)[number], string | number>>;

export const defaultState = (): ReportState => ({
  fields: [],
  stats: [],
  range: DEFAULT_RANGE,
  filters: {},
  offset: 0,
  limit: DEFAULT_LIMIT,
});

/** The stats the report shows: the chosen ones, or all of them. */
export const shownStats = (state: ReportState): StatName[] => (state.stats.length > 0 ? state.stats : [...STATS]);

/** The time breakdown the chart follows, if one is chosen. */
export const timeField = (state: ReportState): FieldName | undefined =>
  state.fields.find((f) => TIME_FIELDS.includes(f));

const isField = (value: string): value is FieldName => (FIELDS as readonly string[]).includes(value);
const isStat = (value: string): value is StatName => (STATS as readonly string[]).includes(value);

function fieldNamed(name: string): FieldName | undefined {
  return FIELDS.find((f) => f.toLowerCase() === name.toLowerCase());
}

function statNamed(name: string): StatName | undefined {
  const lower = name.toLowerCase();
  return STATS.find((s) => s.toLowerCase() === lower) ?? STAT_ALIASES[lower];
}

const DATE = /^\d{4}-\d{2}-\d{2}$/;
// A wall time: no offset, so the API reads it in the report's zone.
const WALL = /^(\d{4}-\d{2}-\d{2})T([01]\d|2[0-3]):[0-5]\d(:[0-5]\d(\.\d{1,6})?)?$/;
const DATE_TIME = /^(\d{4}-\d{2}-\d{2})T\d{2}:\d{2}(:\d{2}(\.\d{1,6})?)?(Z|[+-]\d{2}:?\d{2})$/;
// A `+` offset that reached us unencoded was decoded as a space, as the API also reads it.
const DECODED_PLUS = /^(\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(?::\d{2}(?:\.\d{1,6})?)?) (\d{2}:?\d{2})$/;

function isRealDay(ymd: string): boolean {
  const ms = Date.parse(`${ymd}T00:00:00Z`);
  return !Number.isNaN(ms) && new Date(ms).toISOString().slice(0, 10) === ymd;
}

/**
 * A date bound as the API takes it: a day or a wall time (no offset) as it is, a date-time with
 * an offset as the same instant in UTC (`2026-11-01T08:00:00Z`, milliseconds only when there are
 * some); undefined when it is none of these.
 */
export function readBound(value: string): string | undefined {
  const text = value.trim().replace(DECODED_PLUS, "$1+$2");
  if (DATE.test(text)) return isRealDay(text) && text >= "0001-01-01" ? text : undefined;
  const wall = WALL.exec(text);
  if (wall?.[1]) return isRealDay(wall[1]) && text >= "0001-01-01" ? text : undefined;
  const match = DATE_TIME.exec(text);
  if (!match?.[1] || !isRealDay(match[1])) return undefined;
  const ms = Date.parse(text);
  if (Number.isNaN(ms)) return undefined;
  const iso = new Date(ms).toISOString();
  if (!/^\d{4}-/.test(iso)) return undefined;
  return iso.endsWith(".000Z") ? `${iso.slice(0, 19)}Z` : iso;
}

/** Whether a bound is an instant (it ends in Z) rather than a day or a wall time in the zone. */
const isInstant = (bound: string) => bound.endsWith("Z");

/**
 * A bound as the wall clock of `zone` reads it (`YYYY-MM-DDTHH:MM:SS`, or the day alone): an
 * instant from a link shows where that zone's clock was.
 */
export function wallBound(bound: string, zone: string): string {
  return isInstant(bound) ? wallTime(Date.parse(bound), zone) : bound;
}

/** A bound's day and time in `zone` (HH:MM, or "" for a whole day), for the date and time inputs. */
export function splitBound(bound: string | undefined, zone: string): { day: string; time: string } {
  if (!bound) return { day: "", time: "" };
  const wall = wallBound(bound, zone);
  return { day: wall.slice(0, 10), time: wall.slice(11, 16) };
}

/** A day and an optional time (HH:MM) as a bound, wall time in the report's zone; undefined without a day. */
export function joinBound(day: string, time: string): string | undefined {
  if (!day) return undefined;
  return readBound(time ? `${day}T${time}` : day);
}

const text = (value: unknown): string | undefined =>
  typeof value === "string" ? value : typeof value === "number" ? String(value) : undefined;

function integer(value: unknown, min: number, max: number): number | undefined {
  const raw =
    typeof value === "number" ? value : typeof value === "string" && /^\d+$/.test(value) ? Number(value) : NaN;
  return Number.isSafeInteger(raw) && raw >= min && raw <= max ? raw : undefined;
}

const list = (value: string) =>
  value
    .split(",")
    .map((s) => s.trim())
    .filter((s) => s !== "");

const show = (value: unknown) => {
  const shown = typeof value === "string" ? value : JSON.stringify(value);
  return shown.length > 40 ? `${shown.slice(0, 40)}…` : shown;
};

/** A sortBy value in the API's syntax: a stat descends unless `+`, a field ascends unless `-`. */
export function readSortBy(raw: string): { key: string; direction: "asc" | "desc" | "default" } {
  const value = raw.startsWith(" ") ? `+${raw.trimStart()}` : raw.trim();
  if (value.startsWith("+")) return { key: value.slice(1).trim(), direction: "asc" };
  if (value.startsWith("-")) return { key: value.slice(1).trim(), direction: "desc" };
  return { key: value, direction: "default" };
}

/** The sort in the API's syntax, as short as it can be. */
export function writeSortBy(sort: ReportSort): string {
  if (isStat(sort.key)) return sort.direction === "asc" ? `+${sort.key}` : sort.key;
  return sort.direction === "desc" ? `-${sort.key}` : sort.key;
}

/**
 * The report's state from search params (as the router parsed them, or plain strings): every
 * value is checked, and one that is not valid is left out with a note saying so, so a mistyped
 * shared link still opens the report.
 */
export function readSearch(raw: Record<string, unknown>): { state: ReportState; notes: string[] } {
  const state = defaultState();
  const notes: string[] = [];
  const drop = (name: string, value: unknown, why: string) => notes.push(`${name} '${show(value)}' ${why}`);

  const fieldsText = text(raw.fields);
  if (raw.fields !== undefined && fieldsText === undefined) drop("fields", raw.fields, "is not a list: left out.");
  for (const name of list(fieldsText ?? "")) {
    const field = fieldNamed(name);
    if (!field) drop("Breakdown", name, "is not one the report offers: left out.");
    else if (!state.fields.includes(field)) state.fields.push(field);
  }

  const statsText = text(raw.stats);
  if (raw.stats !== undefined && statsText === undefined) drop("stats", raw.stats, "is not a list: left out.");
  for (const name of list(statsText ?? "")) {
    const stat = statNamed(name);
    if (!stat) drop("Stat", name, "is not one the report offers: left out.");
    else if (!state.stats.includes(stat)) state.stats.push(stat);
  }

  let range: RangeChoice | undefined;
  if (raw.range !== undefined) {
    const value = text(raw.range);
    range = [...PRESETS, "custom"].find((p) => p === value) as RangeChoice | undefined;
    if (!range) drop("range", raw.range, `is not one of ${[...PRESETS, "custom"].join(", ")}: the last 30 days shown.`);
  }
  const bounds: { from?: string; to?: string } = {};
  for (const end of ["from", "to"] as const) {
    if (raw[end] === undefined) continue;
    const value = text(raw[end]);
    const bound = value === undefined ? undefined : readBound(value);
    if (bound === undefined) drop(end, raw[end], "is not a date (YYYY-MM-DD) or a date-time: left out.");
    else bounds[end] = bound;
  }
  const hasBounds = bounds.from !== undefined || bounds.to !== undefined;
  if (range !== undefined && range !== "custom" && hasBounds) {
    notes.push(`from and to apply to a custom range only: range '${range}' shown.`);
  }
  state.range = range ?? (hasBounds ? "custom" : DEFAULT_RANGE);
  if (state.range === "custom") Object.assign(state, bounds);

  for (const name of FILTERS) {
    if (raw[name] === undefined) continue;
    const id = integer(raw[name], 1, Number.MAX_SAFE_INTEGER);
    if (id === undefined) drop(name, raw[name], "is not an id: the filter was left out.");
    else state.filters[name] = id;
  }

  const shown = shownStats(state);
  if (raw.sortBy !== undefined) {
    const value = text(raw.sortBy);
    const read = value === undefined ? undefined : readSortBy(value);
    const stat = read ? statNamed(read.key) : undefined;
    const field = read ? fieldNamed(read.key) : undefined;
    if (read && stat && shown.includes(stat)) {
      state.sort = { key: stat, direction: read.direction === "asc" ? "asc" : "desc" };
    } else if (read && field && state.fields.includes(field)) {
      state.sort = { key: field, direction: read.direction === "desc" ? "desc" : "asc" };
    } else {
      drop("sortBy", raw.sortBy, "is not a chosen breakdown or stat: the default order shown.");
    }
  }

  if (raw.offset !== undefined) {
    const offset = integer(raw.offset, 0, MAX_OFFSET);
    if (offset === undefined) drop("offset", raw.offset, `is not a whole number from 0 to ${MAX_OFFSET}: left out.`);
    else state.offset = offset;
  }
  if (raw.limit !== undefined) {
    const limit = integer(raw.limit, 1, MAX_LIMIT);
    if (limit === undefined) drop("limit", raw.limit, `is not a whole number from 1 to ${MAX_LIMIT}: left out.`);
    else state.limit = limit;
  }

  if (raw.chart !== undefined) {
    const value = text(raw.chart);
    const stat = value === undefined ? undefined : statNamed(value);
    if (stat && shown.includes(stat)) state.chart = stat;
    else drop("chart", raw.chart, "is not a shown stat: the first one charted.");
  }

  if (raw.currency !== undefined) {
    const currency = currencyParam(raw.currency);
    if (currency) state.currency = currency;
    else
      drop("currency", raw.currency, "is not a currency code (three letters, ISO 4217): the reporting currency shown.");
  }

  if (raw.tz !== undefined) {
    const zone = timeZoneParam(raw.tz);
    if (zone) state.timeZone = zone;
    else drop("tz", raw.tz, "is not a time zone name (such as Europe/Berlin): the account's time zone shown.");
  }

  if (raw.compare !== undefined) {
    if (text(raw.compare) === "previous") state.compare = "previous";
    else drop("compare", raw.compare, "is not 'previous': no comparison shown.");
  }
  return { state, notes };
}

/** The state as search params, leaving out what is the default, so a shared link stays short. */
export function writeSearch(state: ReportState): ReportSearch {
  const search: ReportSearch = {};
  if (state.fields.length > 0) search.fields = state.fields.join(",");
  if (state.stats.length > 0) search.stats = state.stats.join(",");
  if (state.range !== DEFAULT_RANGE) search.range = state.range;
  if (state.range === "custom") {
    if (state.from !== undefined) search.from = state.from;
    if (state.to !== undefined) search.to = state.to;
  }
  for (const name of FILTERS) {
    const id = state.filters[name];
    if (id !== undefined) search[name] = id;
  }
  if (state.sort) search.sortBy = writeSortBy(state.sort);
  if (state.offset !== 0) search.offset = state.offset;
  if (state.limit !== DEFAULT_LIMIT) search.limit = state.limit;
  if (state.chart !== undefined) search.chart = state.chart;
  if (state.currency !== undefined) search.currency = state.currency;
  if (state.timeZone !== undefined) search.tz = state.timeZone;
  if (state.compare !== undefined) search.compare = state.compare;
  return search;
}

/**
 * The router's validateSearch: the page's own params, each a string or a number. Their values
 * are checked when the page reads them (readSearch), which names each one it leaves out; were
 * they dropped here, the router would rewrite the address before anyone could say why.
 */
export function validateReportSearch(raw: Record<string, unknown>): ReportSearch {
  const search: ReportSearch = {};
  for (const key of SEARCH_KEYS) {
    const value = raw[key];
    if (typeof value === "string" || typeof value === "number") search[key] = value;
    else if (value !== undefined) search[key] = JSON.stringify(value);
  }
  return search;
}

/**
 * A change to the breakdowns or stats: the page goes back to the first rows, and a sort or chart
 * stat that no longer shows is dropped (the API refuses a sort on a column it does not answer).
 */
export function withColumns(state: ReportState, fields: FieldName[], stats: StatName[]): ReportState {
  const next: ReportState = { ...state, fields, stats, offset: 0 };
  const shown = shownStats(next);
  const key = state.sort?.key;
  if (key !== undefined && !(isStat(key) ? shown.includes(key) : isField(key) && fields.includes(key))) {
    delete next.sort;
  }
  if (state.chart !== undefined && !shown.includes(state.chart)) delete next.chart;
  return next;
}

/**
 * When a report is asked: the instant presets count back from, and the zone whose days they are
 * (the one chosen, else the account's). A preset is local days of that zone, sent as dates.
 */
export interface ReportClock {
  now: number;
  zone: string;
}

/** The API's window parameters; a custom end left empty is the API's default. */
export function windowQuery(
  state: ReportState,
  at: ReportClock,
): { conversionDateFrom?: string; conversionDateTo?: string } {
  if (state.range !== "custom") {
    const { from, to } = presetRange(state.range, at.zone, at.now);
    return { conversionDateFrom: from, conversionDateTo: to };
  }
  return {
    ...(state.from !== undefined ? { conversionDateFrom: state.from } : {}),
    ...(state.to !== undefined ? { conversionDateTo: state.to } : {}),
  };
}

export interface PerformanceQuery {
  fields?: string;
  stats?: string;
  conversionDateFrom?: string;
  conversionDateTo?: string;
  brandId?: number;
  programId?: number;
  accountId?: number;
  linkId?: number;
  trafficSourceId?: number;
  trackerId?: number;
  sortBy?: string;
  offset?: number;
  limit?: number;
  currency?: string;
  timeZone?: string;
}

function common(state: ReportState, at: ReportClock): PerformanceQuery {
  // Always named, so the days the request means never depend on a setting read elsewhere.
  const query: PerformanceQuery = { ...windowQuery(state, at), timeZone: at.zone };
  if (state.stats.length > 0) query.stats = state.stats.join(",");
  if (state.currency !== undefined) query.currency = state.currency;
  for (const name of FILTERS) {
    const id = state.filters[name];
    if (id !== undefined) query[name] = id;
  }
  return query;
}

/** The table's rows: the breakdowns, sorted and paged by the API. */
export function rowsQuery(state: ReportState, at: ReportClock): PerformanceQuery {
  const query = common(state, at);
  if (state.fields.length > 0) query.fields = state.fields.join(",");
  if (state.sort) query.sortBy = writeSortBy(state.sort);
  query.offset = state.offset;
  query.limit = state.limit;
  return query;
}

/** The totals row: the same request without breakdowns, which the API answers as one row. */
export const totalsQuery = (state: ReportState, at: ReportClock): PerformanceQuery => common(state, at);

/** The chart's points: the chosen stat for each period of the time breakdown, in time order. */
export function chartQuery(
  state: ReportState,
  at: ReportClock,
  field: FieldName,
  stat: StatName,
  split?: FieldName,
): PerformanceQuery {
  return {
    ...common(state, at),
    // With a breakdown beside the time one, its values too: the chart stacks a series per value.
    fields: split ? `${field},${split}` : field,
    stats: stat,
    sortBy: field,
    offset: 0,
    limit: MAX_LIMIT,
  };
}
