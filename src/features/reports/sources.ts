import type { Queryable } from "../../platform/db/index.js";
import type { Conditions } from "../../platform/db/paging.js";
import { DAY_MS } from "../../platform/durations.js";
import {
  COARSE_ROLLUPS,
  DAILY_DIMENSIONS,
  DAY_ROWS,
  EPOCH_DAYS,
  REPORT_MEASURES,
  ROLLUP_SPANS,
  TAIL_DAYS,
} from "../tracking/index.js";

/** A rollup table a report can read: its dimension columns (besides tenant_id and the day). */
export interface RollupSource {
  table: string;
  columns: ReadonlySet<string>;
  /** Holds blocks of days (span > 1) besides single days (span 1). */
  spanned: boolean;
  /** Not a rollup: the raw clicks and conversions of the window (raw-source.ts). */
  raw?: boolean;
  /** A sub-id's rollup, which may leave values out of a day: its days marked under this parameter. */
  gaps?: "a" | "b";
}

const DAILY: RollupSource = {
  table: "daily_rollups",
  columns: new Set(DAILY_DIMENSIONS),
  spanned: false,
};

/**
 * Every rollup, smallest first: brand_rollups (brand x program x source x country a day: a few
 * thousand rows a day however many accounts), account_rollups, account_source_rollups,
 * device_rollups (brand x program x source x device type x OS x browser), the sub-id rollups (source
 * x pa, source x pb), and daily_rollups, which has every catalog dimension but none of the click's
 * device facts or sub-ids.
 */
export const ROLLUP_SOURCES: readonly RollupSource[] = [
  ...COARSE_ROLLUPS.map((r) => ({
    table: r.table,
    columns: new Set(r.keys),
    spanned: r.spanned,
    ...(r.capped ? { gaps: r.capped.parameter } : {}),
  })),
  DAILY,
];

/** The smallest rollup that has every one of `columns`, if any. */
export function findRollup(columns: Iterable<string>): RollupSource | undefined {
  const wanted = [...columns];
  return ROLLUP_SOURCES.find((s) => wanted.every((c) => s.columns.has(c)));
}

/** The smallest rollup that has every one of `columns` (daily_rollups has every catalog dimension). */
export const chooseRollup = (columns: Iterable<string>): RollupSource => findRollup(columns) ?? DAILY;

const LONGEST_FIRST = [...ROLLUP_SPANS].sort((a, b) => b - a);

/** A day (YYYY-MM-DD) as a number of days after 1970-01-01, and back. */
export const dayNumber = (day: string): number => Date.parse(`${day}T00:00:00Z`) / DAY_MS;
export const dayString = (n: number): string => new Date(n * DAY_MS).toISOString().slice(0, 10);
/** The first day of the span-aligned block that holds day `n`. */
export const alignDown = (n: number, span: number): number => n - (((n % span) + span) % span);

/**
 * Which blocks of a tenant the job rollup-blocks has written and are current: those ending by
 * `foldedThrough` (a day number) with none of their days in `dirty` (days changed since), and
 * the tails (TAIL_DAYS) ending on `tailsThrough`, with the same rule.
 */
export interface BlockState {
  foldedThrough: number;
  tailsThrough: number;
  dirty: readonly number[];
  /** The tenant's first day with rows (day number); no row is older. Absent: unknown. */
  firstDay?: number;
}

/** The first spanned rollup, the default one readBlockState reads the first day from. */
const FIRST_SPANNED = ROLLUP_SOURCES.find((s) => s.spanned)?.table ?? "account_rollups";

/** No block is current: every window is read as days. */
export const NO_BLOCKS: BlockState = {
  foldedThrough: Number.NEGATIVE_INFINITY,
  tailsThrough: Number.NEGATIVE_INFINITY,
  dirty: [],
};

/**
 * The tenant's BlockState (one small read; the marks of a tenant are few between two runs), with
 * its first day with rows in `table` (a spanned rollup; the first entry of its index on tenant,
 * span and day).
 */
export async function readBlockState(
  db: Queryable,
  tenantId: string,
  table: string = FIRST_SPANNED,
): Promise<BlockState> {
  const [row] = await db.query<{ folded: string | null; tails: string | null; dirty: string[]; first: string | null }>(
    `select s.folded_through::text as folded, s.tails_through::text as tails,
            array(select day::text from rollup_block_dirty where tenant_id = $1 order by 1) as dirty,
            (select min(r.day) from ${table} r where r.tenant_id = $1 and r.span = 1)::text as first
       from rollup_block_state s where s.tenant_id = $1`,
    [tenantId],
  );
  if (!row || row.folded === null) return NO_BLOCKS;
  return {
    foldedThrough: dayNumber(row.folded),
    tailsThrough: row.tails === null ? Number.NEGATIVE_INFINITY : dayNumber(row.tails),
    dirty: row.dirty.map(dayNumber),
    firstDay: row.first === null ? Number.POSITIVE_INFINITY : dayNumber(row.first),
  };
}

const isCurrent = (state: BlockState, span: number, start: number): boolean =>
  start + span - 1 <= state.foldedThrough && !state.dirty.some((d) => d >= start && d < start + span);

/**
 * Every aligned block and prefix current, and no tail: what blocksOf and windowPieces assume
 * unless told otherwise.
 */
const ALL_CURRENT: BlockState = {
  foldedThrough: Number.POSITIVE_INFINITY,
  tailsThrough: Number.NEGATIVE_INFINITY,
  dirty: [],
};

/** A block of days [start, start + span - 1] by day numbers. */
interface Run {
  span: number;
  start: number;
}

/** From each day of from..to on, the longest aligned block that ends by `to` and is current. */
function alignedTiling(from: number, to: number, state: BlockState): Run[] {
  const runs: Run[] = [];
  for (let start = from; start <= to; ) {
    const span =
      LONGEST_FIRST.find(
        (s) => alignDown(start, s) === start && start + s - 1 <= to && (s === 1 || isCurrent(state, s, start)),
      ) ?? 1;
    runs.push({ span, start });
    start += span;
  }
  return runs;
}

/**
 * The blocks that tile the days from..to (YYYY-MM-DD, inclusive) exactly, in order: from each
 * day on, the longest block that starts there (a multiple of its span after 1970-01-01), ends by
 * `to` and is current in `state` (a day always is). With every block current a 30-day window is
 * about 6 blocks.
 */
export function blocksOf(
  fromDay: string,
  toDay: string,
  state: BlockState = ALL_CURRENT,
): { span: number; day: string }[] {
  return alignedTiling(dayNumber(fromDay), dayNumber(toDay), state).map((r) => ({
    span: r.span,
    day: dayString(r.start),
  }));
}

/** A block whose rows a window adds (sign 1) or subtracts (sign -1). */
export interface Piece {
  span: number;
  day: string;
  sign: 1 | -1;
}

type SignedRun = Run & { sign: 1 | -1 };

const plus = (runs: Run[]): SignedRun[] => runs.map((r) => ({ ...r, sign: 1 }));

/**
 * The days from..to as the fewest signed blocks of the epochs they cover (see windowPieces): in
 * each, its aligned tiling, or its prefix through the last day whose prefix is current, minus the
 * prefix before the part, plus the aligned tiling of the days left.
 */
function epochPieces(first: number, to: number, state: BlockState): SignedRun[] {
  const pieces: SignedRun[] = [];
  for (let from = first; from <= to; ) {
    const epoch = alignDown(from, EPOCH_DAYS);
    const last = Math.min(to, epoch + EPOCH_DAYS - 1);
    const aligned = alignedTiling(from, last, state);
    const firstDirty = Math.min(...state.dirty.filter((d) => d >= epoch && d <= last));
    // The last day of the part whose prefix is current.
    const through = Math.min(last, state.foldedThrough, firstDirty - 1);
    const rest = through >= from ? alignedTiling(through + 1, last, state) : [];
    const prefixes = from > epoch ? 2 : 1;
    if (through >= from && prefixes + rest.length < aligned.length) {
      pieces.push({ span: through - epoch + 1, start: epoch, sign: 1 });
      if (from > epoch) pieces.push({ span: from - epoch, start: epoch, sign: -1 });
      pieces.push(...plus(rest));
    } else {
      pieces.push(...plus(aligned));
    }
    from = last + 1;
  }
  return pieces;
}

const subtracts = (pieces: SignedRun[]) => pieces.some((p) => p.sign < 0);

/**
 * How a window reads the spanned rollups: the fewest blocks whose signed sum is exactly its
 * days from..to. Within each epoch (EPOCH_DAYS days) it covers, either the aligned blocks that
 * tile its part (blocksOf), or its epoch's prefix through the last day whose prefix is current,
 * minus the prefix through the day before the part (none when the part starts the epoch), plus
 * the aligned blocks of the days left: a 30-day window is then two prefixes and today, where the
 * aligned blocks would be about 8 pieces of as many rows each. A prefix is current while it ends
 * by the last fold and none of its days changed since; the aligned blocks win a tie, being
 * smaller. A window holding the day the tails end on (`tailsThrough`) may instead read the
 * longest current tail within it, with the days before and after it read as above: a 30-day
 * window ending today is then its tail and today. The tail wins when it makes fewer pieces, or
 * as many with nothing subtracted.
 */
export function windowPieces(fromDay: string, toDay: string, state: BlockState = ALL_CURRENT): Piece[] {
  const [from, to] = [dayNumber(fromDay), dayNumber(toDay)];
  let pieces = epochPieces(from, to, state);
  const end = state.tailsThrough;
  if (end >= from && end <= to) {
    // The tail starts after the window's first day, its longest span and any day changed since.
    const start = Math.max(from, end - TAIL_DAYS + 1, ...state.dirty.filter((d) => d <= end).map((d) => d + 1));
    if (start < end) {
      const tailed = [
        ...epochPieces(from, start - 1, state),
        { span: end - start + 1, start, sign: 1 as const },
        ...epochPieces(end + 1, to, state),
      ];
      const fewer = tailed.length - pieces.length;
      if (fewer < 0 || (fewer === 0 && subtracts(pieces) && !subtracts(tailed))) pieces = tailed;
    }
  }
  return pieces.map((p) => ({ span: p.span, day: dayString(p.start), sign: p.sign }));
}

/** The rows a report reads over a window: `from` to use as `<from> m`, and whether it subtracts. */
export interface WindowRows {
  from: string;
  /** Some rows are subtracted: a group can sum to nothing, told by its day_rows summing to 0. */
  signed: boolean;
}

/**
 * The unfolded days (after the last fold) a window lists one by one, as windowPieces gives them;
 * past this many, they are one range instead (see addWindow).
 */
const LISTED_DAYS = EPOCH_DAYS;

/**
 * Adds to `filter` the condition selecting the rows of `m`, a `source`, that fall in the days
 * from..to, and returns what to read them from: single days (span 1) when `byDay` (the report
 * groups by date, week or month) or the source has only days, else the blocks of windowPieces,
 * current ones only (`state`, read by readBlockState just before): a block the job rollup-blocks
 * has not yet written, or whose days changed since, is read as shorter blocks or days, so a
 * report is exact after any write. With a subtracted block the rows come through a projection
 * that negates its measures and day_rows. Each block is its own `span = and day =` term (the
 * single days one list): the planner sees every value and reads each block through an index.
 * Written as a join on an array of blocks instead, it could not tell how many rows match and
 * chose to scan the whole table (1.4 s instead of 0.3 s for a 30-day account x source report at
 * 10M clicks).
 *
 * The planning costs what the tenant's data spans, not what the window does: the window starts no
 * earlier than the tenant's first day with rows (`state.firstDay`), and its days after the last
 * fold, which no current block holds, are one `day between` range when there are more than
 * LISTED_DAYS of them (a window reaching years into the future, a tenant never folded) instead of
 * one listed day each (a window to 9999-12-31 took 28 s that way, the event loop held throughout).
 */
export function addWindow(
  filter: Conditions,
  source: RollupSource,
  [fromDay, toDay]: [string, string],
  byDay: boolean,
  state: BlockState,
): WindowRows {
  if (!source.spanned || byDay) {
    if (source.spanned) filter.when(true, "m.span = 1");
    filter.add("m.day >= $::date", fromDay).add("m.day <= $::date", toDay);
    return { from: source.table, signed: false };
  }
  const param = (value: unknown) => {
    filter.params.push(value);
    return `$${filter.params.length}`;
  };
  const to = dayNumber(toDay);
  const from = Math.max(dayNumber(fromDay), state.firstDay ?? Number.NEGATIVE_INFINITY);
  if (from > to) {
    // Nothing of the tenant's is that old.
    filter.when(true, "false");
    return { from: source.table, signed: false };
  }
  const unfolded = Math.max(from, state.foldedThrough + 1);
  const ranged = to - unfolded + 1 > LISTED_DAYS;
  // Every piece windowPieces gives for the days before `unfolded` is the same whether or not the
  // window goes on after it: the days after the fold are single days either way.
  const pieces = ranged
    ? unfolded > from
      ? windowPieces(dayString(from), dayString(unfolded - 1), state)
      : []
    : windowPieces(dayString(from), toDay, state);
  const term = (p: Piece, alias: string) => `(${alias}.span = ${p.span} and ${alias}.day = ${param(p.day)}::date)`;
  const terms = pieces.filter((p) => p.span > 1).map((p) => term(p, "m"));
  // The days as a list, not a range: with a list of accounts after them in the key (a page's),
  // the index is searched for each day and account instead of read through the whole range.
  const days = pieces.filter((p) => p.span === 1).map((p) => p.day);
  if (days.length > 0) terms.push(`(m.span = 1 and m.day = any(${param(days)}::date[]))`);
  if (ranged) {
    terms.push(`(m.span = 1 and m.day between ${param(dayString(unfolded))}::date and ${param(toDay)}::date)`);
  }
  filter.when(true, terms.length > 0 ? `(${terms.join(" or ")})` : "false");
  const subtracted = pieces.filter((p) => p.sign < 0);
  if (subtracted.length === 0) return { from: source.table, signed: false };
  const negative = subtracted.map((p) => term(p, "r")).join(" or ");
  const columns = ["tenant_id", "span", "day", ...source.columns];
  const measures = [...REPORT_MEASURES, DAY_ROWS].map(
    (c) => `case when ${negative} then -r.${c} else r.${c} end as ${c}`,
  );
  return {
    from: `(select ${[...columns.map((c) => `r.${c}`), ...measures].join(", ")} from ${source.table} r)`,
    signed: true,
  };
}
