import type { Conditions } from "../../platform/db/paging.js";
import { COARSE_ROLLUPS, ROLLUP_SPANS } from "../tracking/rollups.js";

/** A rollup table a report can read: its dimension columns (besides tenant_id and the day). */
export interface RollupSource {
  table: string;
  columns: ReadonlySet<string>;
  /** Holds blocks of days (span > 1) besides single days (span 1). */
  spanned: boolean;
}

const DAILY: RollupSource = {
  table: "daily_rollups",
  columns: new Set(["account_id", "link_id", "brand_id", "program_id", "traffic_source_id", "tracker_id", "country"]),
  spanned: false,
};

/**
 * Every rollup, smallest first: brand_rollups (brand x program x source x country a day: a few
 * thousand rows a day however many accounts), account_rollups, account_source_rollups, and
 * daily_rollups, which has every dimension.
 */
export const ROLLUP_SOURCES: readonly RollupSource[] = [
  ...COARSE_ROLLUPS.map((r) => ({ table: r.table, columns: new Set(r.keys), spanned: r.spanned })),
  DAILY,
];

/** The smallest rollup that has every one of `columns`. */
export function chooseRollup(columns: Iterable<string>): RollupSource {
  const wanted = [...columns];
  return ROLLUP_SOURCES.find((s) => wanted.every((c) => s.columns.has(c))) ?? DAILY;
}

const DAY_MS = 86_400_000;
const LONGEST_FIRST = [...ROLLUP_SPANS].sort((a, b) => b - a);

/**
 * The blocks that tile the days from..to (YYYY-MM-DD, inclusive) exactly, in order: from each
 * day on, the longest block that starts there (a multiple of its span after 1970-01-01) and
 * ends by `to`. A 30-day window is 7 blocks on average, 12 at most.
 */
export function blocksOf(fromDay: string, toDay: string): { span: number; day: string }[] {
  const to = Date.parse(`${toDay}T00:00:00Z`) / DAY_MS;
  const blocks: { span: number; day: string }[] = [];
  for (let day = Date.parse(`${fromDay}T00:00:00Z`) / DAY_MS; day <= to; ) {
    const span = LONGEST_FIRST.find((s) => ((day % s) + s) % s === 0 && day + s - 1 <= to) ?? 1;
    blocks.push({ span, day: new Date(day * DAY_MS).toISOString().slice(0, 10) });
    day += span;
  }
  return blocks;
}

/**
 * Adds to `filter` the condition selecting the rows of `m`, a `source`, that fall in the days
 * from..to: single days (span 1) when `byDay` (the report groups by date, week or month) or the
 * source has only days, else the blocks that tile the window. A block is read only while it is
 * current (it ends by the tenant's rollup_block_state.folded_through and none of its days is
 * marked in rollup_block_dirty), else its days are: the report is exact before the job
 * rollup-blocks has written the block. `filter`'s first parameter ($1) is the tenant.
 */
export function addWindow(
  filter: Conditions,
  source: RollupSource,
  [fromDay, toDay]: [string, string],
  byDay: boolean,
) {
  if (!source.spanned || byDay) {
    if (source.spanned) filter.when(true, "m.span = 1");
    filter.add("m.day >= $::date", fromDay).add("m.day <= $::date", toDay);
    return;
  }
  const blocks = blocksOf(fromDay, toDay);
  filter.params.push(
    blocks.map((b) => b.span),
    blocks.map((b) => b.day),
  );
  const n = filter.params.length;
  filter.when(
    true,
    `(m.span, m.day) in (
      select case when o.current then b.span else 1 end::int2, g.day::date
        from unnest($${n - 1}::int2[], $${n}::date[]) as b (span, day)
        cross join lateral (
          select b.span > 1
             and b.day + (b.span - 1) <= coalesce(
               (select s.folded_through from rollup_block_state s where s.tenant_id = $1), date '-infinity')
             and not exists (
               select 1 from rollup_block_dirty x
                where x.tenant_id = $1 and x.day between b.day and b.day + (b.span - 1)) as current
        ) o
        cross join lateral generate_series(
          b.day::timestamp, (b.day + case when o.current then 0 else b.span - 1 end)::timestamp, interval '1 day'
        ) as g (day))`,
  );
}
