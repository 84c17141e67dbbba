import { Conditions } from "../../platform/db/paging.js";
import { DAY_MS } from "../../platform/durations.js";
import {
  COUNTED_STATUSES,
  type ConversionStatus,
  RAW_EVENT_RETENTION_DAYS,
  REPORT_MEASURES,
} from "../tracking/index.js";
import { addWindow, type BlockState, dayString, NO_BLOCKS, type RollupSource, type WindowRows } from "./sources.js";

/** A part of a window read from the raw events: from `from` to `to` (inclusive, or not when `open`). */
export interface RawRange {
  from: Date;
  to: Date;
  /** `to` is excluded: the range ends at the start of the next UTC day. */
  open: boolean;
}

/** How a window is read: whole UTC days from the rollups, partial edge days from the raw events. */
export interface WindowSplit {
  /** The whole UTC days (YYYY-MM-DD, inclusive) the rollups give, if any. */
  days: [string, string] | null;
  /** The parts of edge days read from the raw events (at most two). */
  raw: RawRange[];
}

const startOfDay = (at: Date): number => Math.floor(at.getTime() / DAY_MS) * DAY_MS;

/**
 * Splits a window (both ends inclusive, to the millisecond) into the whole UTC days inside it,
 * which the day rollups answer, and the partial days at its edges, which only the raw events
 * (clicks, conversions) can answer exactly. The raw events are kept RAW_EVENT_RETENTION_DAYS
 * days: an edge day that starts before `now` minus that may be partly deleted already, so it is
 * read whole from the rollups instead (the window widened to that UTC day, as documented).
 */
export function splitWindow(window: { from: Date; to: Date }, now: Date): WindowSplit {
  const kept = now.getTime() - RAW_EVENT_RETENTION_DAYS * DAY_MS;
  const fromDay = startOfDay(window.from);
  const toDay = startOfDay(window.to);
  const fromPartial = window.from.getTime() > fromDay && fromDay >= kept;
  const toPartial = window.to.getTime() < toDay + DAY_MS - 1 && toDay >= kept;
  if (fromDay === toDay) {
    if (!fromPartial && !toPartial) return { days: [dayString(fromDay / DAY_MS), dayString(toDay / DAY_MS)], raw: [] };
    return { days: null, raw: [{ from: window.from, to: window.to, open: false }] };
  }
  const raw: RawRange[] = [];
  if (fromPartial) raw.push({ from: window.from, to: new Date(fromDay + DAY_MS), open: true });
  if (toPartial) raw.push({ from: new Date(toDay), to: window.to, open: false });
  const first = fromPartial ? fromDay + DAY_MS : fromDay;
  const last = toPartial ? toDay - DAY_MS : toDay;
  return { days: first <= last ? [dayString(first / DAY_MS), dayString(last / DAY_MS)] : null, raw };
}

/**
 * A report that groups by local time: by day, week or month in a zone other than UTC, or by hour
 * in any. Its window is read from the raw events wherever they are kept, so that each event falls
 * in its local day and hour (the rollups' days are UTC days).
 */
export interface LocalTime {
  /** IANA name. */
  zone: string;
  /** The rows carry local_hour too: the instant the event's local hour starts. */
  hour: boolean;
}

/** The columns a window's rows carry for a LocalTime: local_day, and local_hour when asked. */
export const localColumns = (local: LocalTime | undefined): string[] =>
  local === undefined ? [] : local.hour ? ["local_day", "local_hour"] : ["local_day"];

/**
 * How a window grouped by local time is read: every UTC day whose raw events are all kept from
 * the raw events (from the window's first instant), and the days before, which only the rollups
 * still hold, as whole UTC days. Those old days count as whole days of their UTC date (the window
 * widened to them, as splitWindow does for an old edge).
 */
function splitLocal(window: { from: Date; to: Date }, now: Date): WindowSplit {
  const firstKept = Math.ceil((now.getTime() - RAW_EVENT_RETENTION_DAYS * DAY_MS) / DAY_MS) * DAY_MS;
  if (window.from.getTime() >= firstKept)
    return { days: null, raw: [{ from: window.from, to: window.to, open: false }] };
  const lastOld = Math.min(startOfDay(window.to), firstKept - DAY_MS);
  const days: [string, string] = [dayString(startOfDay(window.from) / DAY_MS), dayString(lastOld / DAY_MS)];
  if (window.to.getTime() < firstKept) return { days, raw: [] };
  return { days, raw: [{ from: new Date(firstKept), to: window.to, open: false }] };
}

/** The conversion type whose count and amount each report measure holds. */
const MEASURE_TYPES: Record<(typeof REPORT_MEASURES)[number], string | null> = {
  clicks: null,
  unique_clicks: null,
  bot_clicks: null,
  signup_count: "Signup",
  ftd_count: "FirstTimeDeposit",
  qualifier_count: "Qualifier",
  deposit_count: "Deposit",
  cpa_count: "CpaCommission",
  revshare_count: "RevShareCommission",
  flatfee_count: "FlatFeeCommission",
  deposit_amount: "Deposit",
  cpa_amount: "CpaCommission",
  revshare_amount: "RevShareCommission",
  flatfee_amount: "FlatFeeCommission",
};

/** The measures conversions carry: all but the clicks'. */
const CONVERSION_MEASURES: ReadonlySet<string> = new Set(REPORT_MEASURES.filter((m) => MEASURE_TYPES[m] !== null));

/** The dimensions held as text ('' for none); the others are ids (0 for none). Clicks and conversions have each. */
export const TEXT_DIMENSIONS: ReadonlySet<string> = new Set([
  "country",
  "device",
  "os",
  "browser",
  "parameter_a",
  "parameter_b",
]);

/**
 * A raw event's dimension as the rollups key it: 0 and '' for none. Every expression has the
 * rollup column's exact type, so the planner can push the report's filters into each branch of
 * the union (it does not through a column whose types differ between branches).
 */
function dimension(kind: "clicks" | "conversions", column: string): string {
  if (TEXT_DIMENSIONS.has(column)) return `coalesce(e.${column}, '')`;
  // The currency of an amount, as the conversion writer keys it: none for clicks and for
  // conversions without a value.
  if (column === "currency")
    return kind === "clicks" ? "''::text" : "coalesce(case when e.value is not null then e.currency end, '')";
  return `coalesce(e.${column}, 0)::bigint`;
}

function measure(kind: "clicks" | "conversions", column: (typeof REPORT_MEASURES)[number]): string {
  const amount = column.endsWith("_amount");
  if (kind === "clicks") {
    if (column === "clicks") return "(e.bot_reason is null)::int::bigint";
    if (column === "unique_clicks") return "e.is_unique::int::bigint";
    if (column === "bot_clicks") return "(e.bot_reason is not null)::int::bigint";
    return amount ? "0::numeric" : "0::bigint";
  }
  const type = MEASURE_TYPES[column];
  if (type === null) return "0::bigint";
  return amount
    ? `(case when e.type = '${type}' then coalesce(e.value, 0) else 0 end)::numeric`
    : `(e.type = '${type}')::int::bigint`;
}

/**
 * Like addWindow, for a window of instants (`window`, both ends inclusive): the whole UTC days
 * inside it read from `source` as addWindow reads them, the partial days at its edges from the raw
 * events (with `local`, every kept day from the raw events, each row carrying its local day and
 * hour: see splitLocal) (clicks by click time, conversions by conversion time), one row per event in the
 * rollup's shape, so each event inside the window counts once and none outside it does. A unique
 * click is the click flagged unique when written (the first of its visitor that UTC day), as the
 * rollups count it. A window of whole UTC days reads exactly what addWindow does.
 *
 * The raw events of an edge day are read through their (tenant, time) indexes, in the same
 * statement. Raw events rather than an hourly rollup: nothing is added to the click write path,
 * and at account x source grain an hour holds about as many rollup rows as clicks anyway. The
 * cost is an edge day's events: for a 30-day account x source report with hour edges at 1M clicks
 * over 90 days, 28k raw rows read in about 27 ms, and read again (with the page's accounts) by the
 * paged reports (bench/reports, the *-hours shapes). The tenant is `$1` of `filter`, as addWindow
 * assumes too.
 *
 * The raw conversions read are those of the statuses the rollups hold (pending, approved), so an
 * edge counts what a whole day does. With `statuses` (a status filter other than those: see
 * status.ts), the conversions of the whole window are read from the raw conversions of those
 * statuses, each by its conversion time, and the rollups' rows give clicks only (their conversion
 * measures read as 0); the clicks are read as above. The caller has checked that the window
 * starts within the raw events' retention (readStatusFilter): its raw conversions are all there.
 */
function addExactWindow(
  filter: Conditions,
  source: RollupSource,
  window: { from: Date; to: Date },
  byDay: boolean,
  state: BlockState,
  now: Date,
  local: LocalTime | undefined,
  statuses: readonly ConversionStatus[] | undefined,
): WindowRows {
  // The raw events as the source: the whole window from them (its start checked to be kept).
  const split: WindowSplit = source.raw
    ? { days: null, raw: [{ from: window.from, to: window.to, open: false }] }
    : local === undefined
      ? splitWindow(window, now)
      : splitLocal(window, now);
  if (split.raw.length === 0 && split.days !== null && local === undefined && statuses === undefined)
    return addWindow(filter, source, split.days, byDay, state);
  const param = (value: unknown) => {
    filter.params.push(value);
    return `$${filter.params.length}`;
  };
  const columns = [...source.columns];
  const shape = ["tenant_id", ...(source.spanned ? ["span"] : []), "day", ...columns, ...REPORT_MEASURES];
  if (source.spanned) shape.push("day_rows");
  shape.push(...localColumns(local));
  const zone = local === undefined ? "" : `${param(local.zone)}::text`;
  const branches: string[] = [];
  let signed = false;
  if (split.days !== null) {
    // The whole days' rows, selected inside the union as addWindow selects them; its parameters
    // follow the filter's. Under local time they are whole UTC days (see splitLocal).
    const inner = new Conditions("m.tenant_id = $1", ...filter.params);
    const read = addWindow(inner, source, split.days, byDay, state);
    filter.params.push(...inner.params.slice(filter.params.length));
    signed = read.signed;
    const old: Record<string, string> = {
      local_day: "m.day as local_day",
      local_hour: "(m.day::timestamp at time zone 'UTC') as local_hour",
    };
    // Under a status filter the conversions come from the raw rows below, the whole window's.
    if (statuses !== undefined) {
      for (const m of CONVERSION_MEASURES) old[m] = `${m.endsWith("_amount") ? "0::numeric" : "0::bigint"} as ${m}`;
    }
    branches.push(`select ${shape.map((c) => old[c] ?? `m.${c}`).join(", ")} from ${read.from} m where ${inner.sql}`);
  }
  const raw: string[] = [];
  const whole: RawRange[] = [{ from: window.from, to: window.to, open: false }];
  const tables = [
    ["clicks", "at", split.raw],
    ["conversions", "occurred_at", statuses === undefined ? split.raw : whole],
  ] as const;
  for (const [table, at, parts] of tables) {
    if (parts.length === 0) continue;
    const ranges = parts
      .map(
        (r) =>
          `(e.${at} >= ${param(r.from)}::timestamptz and e.${at} ${r.open ? "<" : "<="} ${param(r.to)}::timestamptz)`,
      )
      .join(" or ");
    const values = [
      "e.tenant_id",
      ...(source.spanned ? ["1::smallint"] : []),
      `(e.${at} at time zone 'UTC')::date`,
      ...columns.map((c) => dimension(table, c)),
      ...REPORT_MEASURES.map((m) => measure(table, m)),
      ...(source.spanned ? ["1"] : []),
      ...(local === undefined ? [] : [`(e.${at} at time zone ${zone})::date`]),
      // The instant the local hour starts: the event's instant less its minutes into that hour
      // (right through a repeated hour, whose two passes have their own offsets).
      ...(local?.hour
        ? [`e.${at} - ((e.${at} at time zone ${zone}) - date_trunc('hour', e.${at} at time zone ${zone}))`]
        : []),
    ];
    // The raw conversions of the statuses counted: the rollups' (pending, approved) by default.
    const status = table === "conversions" ? ` and e.status = any(${param(statuses ?? COUNTED_STATUSES)}::text[])` : "";
    raw.push(
      `select ${values.map((v, i) => `${v} as ${shape[i]}`).join(", ")} from ${table} e where e.tenant_id = $1 and (${ranges})${status}`,
    );
  }
  return { from: `(${[...branches, ...raw].join(" union all ")})`, signed };
}

/** A window's rows as a report reads them: `from`, the conditions on them, and every parameter. */
export interface SelectedWindow extends WindowRows {
  where: string;
  params: unknown[];
  /** The columns the rows carry for local time (localColumns). */
  local: string[];
}

/** How a window's rows are read besides its instants: local time, a status filter. */
export interface WindowOptions {
  /** The rows carry their local day (and hour). */
  local?: LocalTime | undefined;
  /** Conversions of these statuses, from the raw conversions; undefined: the rollups' (StatusFilter.raw). */
  statuses?: readonly ConversionStatus[] | undefined;
}

/**
 * addExactWindow over a fresh set of conditions on the tenant (`$1`, the first of `params`) and
 * `params`' others: single days when `byDay` (no block read), else the blocks current in `state`;
 * with `local`, the rows carry their local day (and hour); with `statuses`, the conversions are
 * those of the raw conversions of those statuses.
 */
export function selectWindow(
  source: RollupSource,
  window: { from: Date; to: Date },
  byDay: boolean,
  state: BlockState,
  now: Date,
  params: readonly unknown[],
  { local, statuses }: WindowOptions = {},
): SelectedWindow {
  const where = new Conditions("m.tenant_id = $1", ...params);
  const rows = addExactWindow(where, source, window, byDay, byDay ? NO_BLOCKS : state, now, local, statuses);
  return { ...rows, where: where.sql, params: where.params, local: localColumns(local) };
}
