import type { Db, Queryable } from "../../platform/db/index.js";
import type { Job } from "../../platform/jobs.js";
import { COARSE_ROLLUPS, DAY_ROWS, EPOCH_DAYS, REPORT_MEASURES, ROLLUP_SPANS, TAIL_DAYS } from "../tracking/rollups.js";
import { alignDown, dayNumber, dayString } from "./sources.js";

const BLOCK_SPANS = ROLLUP_SPANS.filter((s) => s > 1);
const SPANNED = COARSE_ROLLUPS.filter((r) => r.spanned);
const ANALYZED = ["daily_rollups", ...COARSE_ROLLUPS.map((r) => r.table)];
const SUMMED = [...REPORT_MEASURES, DAY_ROWS];
const isAligned = (span: number) => (BLOCK_SPANS as readonly number[]).includes(span);

/** A block of days: its span and first day (YYYY-MM-DD). */
interface Block {
  span: number;
  day: string;
}

/**
 * The blocks to write for a tenant: the aligned blocks (of every span above 1) ending in
 * from..through (the days closed since the last fold) and those ending by `through` that hold a
 * changed day; then the prefixes of their epochs (EPOCH_DAYS) through each day of from..through
 * and through each day from a changed day to its epoch's end (by `through`), but those whose span
 * is 1 (a day) or an aligned block's.
 */
function blocksToFold(from: number, through: number, changed: readonly number[]): Block[] {
  const blocks = new Map<string, Block>();
  const add = (span: number, start: number) => {
    if (start + span - 1 > through) return;
    const day = dayString(start);
    blocks.set(`${span}|${day}`, { span, day });
  };
  for (const span of BLOCK_SPANS) {
    for (let start = alignDown(from, span); start + span - 1 <= through; start += span) {
      if (start + span - 1 >= from) add(span, start);
    }
    for (const day of changed) add(span, alignDown(day, span));
  }
  const prefix = (last: number) => {
    const epoch = alignDown(last, EPOCH_DAYS);
    const span = last - epoch + 1;
    if (span > 1 && !isAligned(span)) add(span, epoch);
  };
  for (let last = from; last <= through; last++) prefix(last);
  for (const day of changed) {
    for (let last = day; last < alignDown(day, EPOCH_DAYS) + EPOCH_DAYS && last <= through; last++) prefix(last);
  }
  return [...blocks.values()];
}

/** A block written as a block a day shorter (at `shorter`, its first day) plus the day `plus`. */
interface Grown extends Block {
  shorter: string;
  plus: string;
}

/** Whether the block span@start is an aligned block or a prefix: written as such, not as a tail. */
const alignedOrPrefix = (span: number, start: number) =>
  (isAligned(span) && alignDown(start, span) === start) ||
  (alignDown(start, EPOCH_DAYS) === start && span <= EPOCH_DAYS);

/** The tails ending on `end` (day number) of spans from `shortest` on, but aligned blocks and prefixes. */
function tailsOf(end: number, shortest: number): Block[] {
  const tails: Block[] = [];
  for (let span = Math.max(2, shortest); span <= TAIL_DAYS; span++) {
    if (!alignedOrPrefix(span, end - span + 1)) tails.push({ span, day: dayString(end - span + 1) });
  }
  return tails;
}

/**
 * The tails a run writes for a tenant whose tails end on `tailsEnd` (null: none yet), folding
 * through `through` with the days `changed` since: all of them, ending on `through`, when that
 * moved (the ones ending on `tailsEnd` are removed); else those holding a changed day. Each is
 * grown from the tail a day shorter, so they are written shortest first.
 */
function tailsToFold(
  tailsEnd: number | null,
  through: number,
  changed: readonly number[],
): { removed: Block[]; written: Grown[] } {
  const grow = (tails: Block[]) => tails.map((t) => ({ ...t, shorter: dayString(dayNumber(t.day) + 1), plus: t.day }));
  if (tailsEnd !== through) {
    return { removed: tailsEnd === null ? [] : tailsOf(tailsEnd, 2), written: grow(tailsOf(through, 2)) };
  }
  const latest = Math.max(...changed.filter((d) => d <= through && d > through - TAIL_DAYS));
  const tails = Number.isFinite(latest) ? tailsOf(through, through - latest + 1) : [];
  return { removed: tails, written: grow(tails) };
}

/** The prefixes among `blocks`, shortest first in each epoch, each grown from the one a day shorter. */
function prefixesOf(blocks: Block[]): Grown[] {
  return blocks
    .filter((b) => !isAligned(b.span))
    .sort((a, b) => (a.day === b.day ? a.span - b.span : a.day < b.day ? -1 : 1))
    .map((b) => ({ ...b, shorter: b.day, plus: dayString(dayNumber(b.day) + b.span - 1) }));
}

/**
 * Rewrites blocks of a tenant in every spanned rollup, after deleting `removed`: the aligned
 * ones as the sums of their days, then `grown` in order, each as the block a day shorter plus
 * its other day (two pieces instead of up to 63 days). The shorter one is current: written just
 * before, or by an earlier run and none of its days changed since (a changed day has every
 * prefix and tail holding it in `grown`).
 */
async function writeBlocks(tx: Queryable, tenantId: string, removed: Block[], aligned: Block[], grown: Grown[]) {
  for (const rollup of SPANNED) {
    await tx.query(
      `delete from ${rollup.table}
        where tenant_id = $1 and span > 1 and (span, day) in (select * from unnest($2::int2[], $3::date[]))`,
      [tenantId, removed.map((b) => b.span), removed.map((b) => b.day)],
    );
    const keys = ["tenant_id", "span", "day", ...rollup.keys];
    const positions = keys.map((_, n) => n + 1).join(", ");
    const insert = `insert into ${rollup.table} (${[...keys, ...SUMMED].join(", ")})
       select r.tenant_id, b.span, b.day, ${rollup.keys.map((k) => `r.${k}`).join(", ")},
         ${SUMMED.map((m) => `sum(r.${m})`).join(", ")}`;
    await tx.query(
      `${insert}
         from unnest($2::int2[], $3::date[]) as b (span, day)
         join ${rollup.table} r
           on r.tenant_id = $1 and r.span = 1 and r.day between b.day and b.day + (b.span - 1)
        group by ${positions}
        order by ${positions}`,
      [tenantId, aligned.map((b) => b.span), aligned.map((b) => b.day)],
    );
    for (const block of grown) {
      await tx.query(
        `${insert}
           from (select $2::int2 as span, $3::date as day) b
           join ${rollup.table} r
             on r.tenant_id = $1
            and ((r.span = $2::int2 - 1 and r.day = $4::date) or (r.span = 1 and r.day = $5::date))
          group by ${positions}
          order by ${positions}`,
        [tenantId, block.span, block.day, block.shorter, block.plus],
      );
    }
  }
}

/**
 * Writes the blocks of days (spans 2 to 64) of the account rollups, each the sum of its days:
 * the blocks of the days closed since the last run (through the day before `now`, an hour
 * after midnight UTC at the earliest, and never past the database's own yesterday), the tails
 * ending on the last of them (moved there from the previous run's last day), and again the
 * blocks and tails holding the days a writer changed since (rollup_block_dirty). The marks are
 * deleted before the days are read, in the same transaction: a writer still marking a day holds
 * its mark, so the delete waits for it and the next statement sees its rows; a mark made after
 * the delete stays for the next run. Idempotent: each block is rewritten from its days. On
 * PGlite, after writing blocks, it analyzes the rollups, as autovacuum does on PostgreSQL.
 */
export async function foldRollupBlocks(db: Db, now: Date) {
  const result = await db.transaction(async (tx) => {
    // One run at a time; writers and readers never lock this table.
    await tx.query("lock table rollup_block_state in exclusive mode");
    const [target] = await tx.query<{ through: string }>(
      `select (least((($1::timestamptz - interval '1 hour') at time zone 'UTC')::date,
                    ((now() - interval '1 hour') at time zone 'UTC')::date) - 1)::text as through`,
      [now],
    );
    const through = String(target?.through);
    const marks = await tx.query<{ tenant_id: string; day: string }>(
      `delete from rollup_block_dirty
        where (tenant_id, day) in (
          select tenant_id, day from rollup_block_dirty where day <= $1::date order by 1, 2 for update)
        returning tenant_id, day::text as day`,
      [through],
    );
    const changed = new Map<string, number[]>();
    for (const m of marks) changed.set(m.tenant_id, [...(changed.get(m.tenant_id) ?? []), dayNumber(m.day)]);
    const tenants = await tx.query<{ id: string; folded: string | null; tails: string | null; first: string | null }>(
      `select t.id, s.folded_through::text as folded, s.tails_through::text as tails,
         (select min(r.day) from account_rollups r where r.tenant_id = t.id and r.span = 1)::text as first
         from tenants t left join rollup_block_state s on s.tenant_id = t.id
        order by t.id`,
    );
    const last = dayNumber(through);
    let written = 0;
    for (const tenant of tenants) {
      const from =
        tenant.folded !== null
          ? dayNumber(tenant.folded) + 1
          : tenant.first !== null
            ? dayNumber(tenant.first)
            : last + 1;
      const days = changed.get(tenant.id) ?? [];
      const blocks = blocksToFold(from, last, days);
      // A tenant without a day has no tail to write, nor any written before.
      const tails =
        tenant.first === null
          ? { removed: [], written: [] }
          : tailsToFold(tenant.tails === null ? null : dayNumber(tenant.tails), last, days);
      if (blocks.length + tails.removed.length + tails.written.length > 0) {
        const aligned = blocks.filter((b) => isAligned(b.span));
        const removed = [...blocks, ...tails.removed, ...tails.written];
        await writeBlocks(tx, tenant.id, removed, aligned, [...prefixesOf(blocks), ...tails.written]);
      }
      written += blocks.length + tails.written.length;
    }
    await tx.query(
      `insert into rollup_block_state (tenant_id, folded_through, tails_through) select id, $1::date, $1::date from tenants
       on conflict (tenant_id) do update
         set folded_through = greatest(rollup_block_state.folded_through, excluded.folded_through),
             tails_through = excluded.tails_through`,
      [through],
    );
    return { foldedThrough: through, tenants: tenants.length, changedDays: marks.length, blocks: written };
  });
  // PGlite has no autovacuum: without this its planner would never know the rollups' sizes.
  if (db.kind === "pglite" && result.blocks > 0) await db.exec(`analyze ${ANALYZED.join(", ")}`);
  return result;
}

/** Hourly at minute 5: the blocks of the account rollups (foldRollupBlocks). */
export function rollupBlocksJob(db: Db): Job {
  return {
    name: "rollup-blocks",
    description: "Writes the blocks of days of the account rollups from their days",
    cron: "5 * * * *",
    run: (now) => foldRollupBlocks(db, now),
  };
}
