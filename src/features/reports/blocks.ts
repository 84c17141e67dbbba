import type { Db, Queryable } from "../../platform/db/index.js";
import type { Job } from "../../platform/jobs.js";
import { COARSE_ROLLUPS, DAY_ROWS, EPOCH_DAYS, REPORT_MEASURES, ROLLUP_SPANS, TAIL_DAYS } from "../tracking/index.js";
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
 * Rewrites blocks of a tenant in every spanned rollup, after deleting `removed`: the aligned
 * ones as the sums of their days, then `grown` in order, each as the block a day shorter plus
 * its other day (two pieces instead of up to 63 days). The shorter one is current: written just
 * before, or earlier and none of its days marked since (planMarks, foldTails).
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
 * The fewest blocks a transaction of the job may be allowed: a changed day's aligned blocks and
 * the prefixes from it to its epoch's end (at most 6 + 57), or all the tails (at most 63).
 */
export const MIN_FOLD_BLOCKS = 64;
/**
 * The default bound (ROLLUP_FOLD_BLOCKS_PER_TRANSACTION): about 0.25 s a transaction on PGlite,
 * measured with rows on every day on a busy 2-core machine.
 */
const DEFAULT_FOLD_BLOCKS = 128;

/** Whether the sorted day numbers `days` hold one in from..to. */
function holdsOne(days: readonly number[], from: number, to: number): boolean {
  let lo = 0;
  let hi = days.length;
  while (lo < hi) {
    const mid = (lo + hi) >> 1;
    if ((days[mid] as number) < from) lo = mid + 1;
    else hi = mid;
  }
  return lo < days.length && (days[lo] as number) <= to;
}

/** The blocks a transaction writes after deleting the marks of some days. */
interface MarkPlan {
  aligned: Block[];
  prefixes: Grown[];
  tails: Grown[];
}

/**
 * What becomes current once the marks of the days `done` are deleted while those of `marked`
 * (sorted) remain, for a tenant folded through `folded` whose tails end on `tailsEnd` (null:
 * none read), and so must be written in the same transaction: a block is current when it ends
 * by `folded` and holds no marked day (sources.ts, readBlockState). So: the aligned blocks that
 * hold a done day and no marked one; in each epoch of a done day, the prefixes from its first
 * done day up to the day before its first marked one (each grown from the one a day shorter,
 * current: it holds neither); and the tails ending on `tailsEnd` that start by its last done day
 * and after its last marked one, shortest first. A block holding a marked day is left to the
 * transaction that deletes that mark, which writes it by the same rule.
 */
function planMarks(done: readonly number[], marked: readonly number[], folded: number, tailsEnd: number | null) {
  const aligned = new Map<string, Block>();
  for (const day of done) {
    for (const span of BLOCK_SPANS) {
      const start = alignDown(day, span);
      if (start + span - 1 <= folded && !holdsOne(marked, start, start + span - 1)) {
        aligned.set(`${span}|${start}`, { span, day: dayString(start) });
      }
    }
  }
  const prefixes: Grown[] = [];
  const firstDone = new Map<number, number>();
  for (const day of done) {
    const epoch = alignDown(day, EPOCH_DAYS);
    firstDone.set(epoch, Math.min(day, firstDone.get(epoch) ?? day));
  }
  for (const [epoch, first] of [...firstDone].sort((a, b) => a[0] - b[0])) {
    const firstMarked = marked.find((d) => d >= epoch && d < epoch + EPOCH_DAYS) ?? Number.POSITIVE_INFINITY;
    const last = Math.min(epoch + EPOCH_DAYS - 1, folded, firstMarked - 1);
    for (let end = first; end <= last; end++) {
      const span = end - epoch + 1;
      if (span > 1 && !isAligned(span)) {
        prefixes.push({ span, day: dayString(epoch), shorter: dayString(epoch), plus: dayString(end) });
      }
    }
  }
  const tails: Grown[] = [];
  if (tailsEnd !== null) {
    const lowest = tailsEnd - TAIL_DAYS + 1;
    const top = Math.max(...done.filter((d) => d >= lowest && d <= tailsEnd));
    const floor = Math.max(lowest - 1, ...marked.filter((d) => d >= lowest && d <= tailsEnd));
    for (let start = top; start > floor; start--) {
      const span = tailsEnd - start + 1;
      if (span >= 2 && !alignedOrPrefix(span, start)) {
        tails.push({ span, day: dayString(start), shorter: dayString(start + 1), plus: dayString(start) });
      }
    }
  }
  return { aligned: [...aligned.values()], prefixes, tails } satisfies MarkPlan;
}

interface TenantBlockState {
  folded: number;
  tails: number | null;
}

async function lockedState(tx: Queryable, tenantId: string): Promise<TenantBlockState | null> {
  // One transaction of the job at a time, across runs and nodes; writers and readers never lock this table.
  await tx.query("lock table rollup_block_state in exclusive mode");
  const [row] = await tx.query<{ folded: string; tails: string | null }>(
    "select folded_through::text as folded, tails_through::text as tails from rollup_block_state where tenant_id = $1",
    [tenantId],
  );
  if (!row) return null;
  return { folded: dayNumber(row.folded), tails: row.tails === null ? null : dayNumber(row.tails) };
}

/** What one transaction did. */
interface Step {
  blocks: number;
  marks: number;
}

/**
 * One transaction over a tenant's marks among `pending` (the run's, removed as they are done):
 * takes the first of them, as many as keep the blocks to write within `budget`, deletes their
 * marks, then writes what that makes current (planMarks). The marks are deleted before the
 * days are read: a writer still marking a day holds its mark, so the delete waits for it and
 * the next statements see its rows; a mark made after the delete stays. The other marks are
 * read after the delete, so a day marked again meanwhile keeps its blocks from being read. The
 * tails, when they do not fit or do not end on the last folded day, are deleted instead and
 * none is read until foldTails writes them all.
 */
async function foldMarks(tx: Queryable, tenantId: string, pending: Set<number>, budget: number): Promise<Step> {
  const state = await lockedState(tx, tenantId);
  if (!state) {
    pending.clear();
    return { blocks: 0, marks: 0 };
  }
  const candidates = (
    await tx.query<{ day: string }>(
      `select day::text as day from rollup_block_dirty
        where tenant_id = $1 and day <= $2::date and day = any($3::date[]) order by day limit $4`,
      [tenantId, dayString(state.folded), [...pending].map(dayString), budget],
    )
  ).map((r) => dayNumber(r.day));
  if (candidates.length === 0) {
    pending.clear();
    return { blocks: 0, marks: 0 };
  }
  const lo = alignDown(candidates[0] as number, EPOCH_DAYS);
  const hi = alignDown(candidates.at(-1) as number, EPOCH_DAYS) + EPOCH_DAYS - 1;
  const tailsEnd = state.tails ?? lo;
  // The marks a plan depends on: in the epochs of the candidates and among the days the tails hold.
  const readMarks = async () =>
    (
      await tx.query<{ day: string }>(
        `select day::text as day from rollup_block_dirty
          where tenant_id = $1 and (day between $2::date and $3::date or day between $4::date and $5::date)
          order by day`,
        [tenantId, dayString(lo), dayString(hi), dayString(tailsEnd - TAIL_DAYS + 1), dayString(tailsEnd)],
      )
    ).map((r) => dayNumber(r.day));
  const before = await readMarks();
  const cost = (count: number) => {
    const done = new Set(candidates.slice(0, count));
    const plan = planMarks(
      [...done],
      before.filter((d) => !done.has(d)),
      state.folded,
      null,
    );
    return plan.aligned.length + plan.prefixes.length;
  };
  // The most candidates within the budget (the cost grows with them; one always fits).
  let [fits, over] = [1, candidates.length + 1];
  while (over - fits > 1) {
    const mid = (fits + over) >> 1;
    if (cost(mid) <= budget) fits = mid;
    else over = mid;
  }
  const done = candidates.slice(0, fits);
  // Locked in key order first, as the writers lock them: neither can wait for the other in a cycle.
  await tx.query(
    `delete from rollup_block_dirty
      where (tenant_id, day) in (
        select tenant_id, day from rollup_block_dirty where tenant_id = $1 and day = any($2::date[])
         order by 1, 2 for update)`,
    [tenantId, done.map(dayString)],
  );
  const plan = planMarks(done, await readMarks(), state.folded, state.tails);
  const written = plan.aligned.length + plan.prefixes.length;
  let dropped: Block[] = [];
  if (plan.tails.length > 0 && (state.tails !== state.folded || written + plan.tails.length > budget)) {
    dropped = state.tails === null ? [] : tailsOf(state.tails, 2);
    plan.tails = [];
    await tx.query("update rollup_block_state set tails_through = null where tenant_id = $1", [tenantId]);
  }
  const grown = [...plan.prefixes, ...plan.tails];
  await writeBlocks(tx, tenantId, [...plan.aligned, ...grown, ...dropped], plan.aligned, grown);
  for (const day of done) pending.delete(day);
  return { blocks: written + plan.tails.length, marks: done.length };
}

/**
 * One transaction writing a tenant's tails when they do not end on its last folded day (moved
 * there, or deleted by foldMarks): those ending on the earlier day are deleted, the new ones
 * written shortest first, each grown from the one a day shorter (at most TAIL_DAYS - 1 blocks).
 * A tenant without a day has none to write.
 */
async function foldTails(tx: Queryable, tenantId: string): Promise<Step> {
  const state = await lockedState(tx, tenantId);
  if (!state || state.tails === state.folded) return { blocks: 0, marks: 0 };
  const [any] = await tx.query<{ found: boolean }>(
    "select exists (select 1 from account_rollups where tenant_id = $1 and span = 1) as found",
    [tenantId],
  );
  const removed = state.tails === null ? [] : tailsOf(state.tails, 2);
  const written = any?.found
    ? tailsOf(state.folded, 2).map((t) => ({ ...t, shorter: dayString(dayNumber(t.day) + 1), plus: t.day }))
    : [];
  await writeBlocks(tx, tenantId, [...removed, ...written], [], written);
  await tx.query("update rollup_block_state set tails_through = folded_through where tenant_id = $1", [tenantId]);
  return { blocks: written.length, marks: 0 };
}

/**
 * The first transaction of a run: moves every tenant's last folded day to `through` (the day
 * before `now`, an hour after midnight UTC at the earliest, never past the database's own
 * yesterday), marking each day it moves over (from the tenant's first day when it had none), so
 * no block holding one is read until written; the tails stay where they are until foldTails
 * moves them. Returns the marks to do (those through each tenant's last folded day) and the
 * tenants whose tails are to move.
 */
async function advance(tx: Queryable, now: Date) {
  await tx.query("lock table rollup_block_state in exclusive mode");
  const [target] = await tx.query<{ through: string }>(
    `select (least((($1::timestamptz - interval '1 hour') at time zone 'UTC')::date,
                  ((now() - interval '1 hour') at time zone 'UTC')::date) - 1)::text as through`,
    [now],
  );
  const through = String(target?.through);
  await tx.query(
    `insert into rollup_block_dirty (tenant_id, day)
     select f.id, f.first + n
       from (select t.id,
                    coalesce(s.folded_through + 1,
                             (select min(r.day) from account_rollups r where r.tenant_id = t.id and r.span = 1)) as first
               from tenants t left join rollup_block_state s on s.tenant_id = t.id) f
       cross join lateral generate_series(0, $1::date - f.first) as n
      order by 1, 2
     on conflict (tenant_id, day) do nothing`,
    [through],
  );
  const tenants = await tx.query<{ id: string }>(
    `insert into rollup_block_state (tenant_id, folded_through) select id, $1::date from tenants
     on conflict (tenant_id) do update
       set folded_through = greatest(rollup_block_state.folded_through, excluded.folded_through)
     returning tenant_id as id`,
    [through],
  );
  const marks = await tx.query<{ tenant_id: string; day: string }>(
    `select d.tenant_id, d.day::text as day
       from rollup_block_dirty d join rollup_block_state s on s.tenant_id = d.tenant_id
      where d.day <= s.folded_through`,
  );
  const moving = await tx.query<{ tenant_id: string }>(
    "select tenant_id from rollup_block_state where tails_through is distinct from folded_through",
  );
  const pending = new Map<string, Set<number>>();
  for (const m of marks) pending.set(m.tenant_id, (pending.get(m.tenant_id) ?? new Set()).add(dayNumber(m.day)));
  for (const m of moving) if (!pending.has(m.tenant_id)) pending.set(m.tenant_id, new Set());
  return { through, tenants: tenants.length, pending };
}

export interface FoldOptions {
  /** At most this many blocks per transaction (ROLLUP_FOLD_BLOCKS_PER_TRANSACTION; MIN_FOLD_BLOCKS at least). */
  maxBlocks?: number;
  /** Awaited after each transaction has committed (measurements, tests); a throw stops the run there. */
  onCommit?: (step: { blocks: number; ms: number }) => void | Promise<void>;
}

/**
 * Writes the blocks of days (spans 2 to 64) of the account rollups, each the sum of its days: the
 * blocks of the days closed since the last run, the tails ending on the last of them, and again
 * the blocks and tails holding the days a writer changed since (rollup_block_dirty). The work is
 * cut into transactions of at most `maxBlocks` blocks, each yielding to the event loop before
 * the next, so neither a backlog (a tenant's first run over years of days, many changed days)
 * nor PGlite's single connection holds other requests for long. Every transaction leaves the
 * state reports read exact (see advance, foldMarks, foldTails): a run stopped anywhere is taken
 * up by the next, which finds the marks and tails left. Idempotent: each block is rewritten
 * from its days. On PGlite, after writing blocks, it analyzes the rollups, as autovacuum does on
 * PostgreSQL.
 */
export async function foldRollupBlocks(db: Db, now: Date, options: FoldOptions = {}) {
  const budget = Math.max(MIN_FOLD_BLOCKS, options.maxBlocks ?? DEFAULT_FOLD_BLOCKS);
  const measured = { transactions: 0, mostBlocksInTransaction: 0, longestTransactionMs: 0 };
  const step = async <T extends Step>(work: (tx: Queryable) => Promise<T>): Promise<T> => {
    const started = performance.now();
    const done = await db.transaction(work);
    const ms = Math.round(performance.now() - started);
    measured.transactions++;
    measured.mostBlocksInTransaction = Math.max(measured.mostBlocksInTransaction, done.blocks);
    measured.longestTransactionMs = Math.max(measured.longestTransactionMs, ms);
    await options.onCommit?.({ blocks: done.blocks, ms });
    // Whatever waited for the database (PGlite has one connection) goes before the next step.
    await new Promise<void>((resolve) => setImmediate(resolve));
    return done;
  };
  const start = await step(async (tx) => ({ ...(await advance(tx, now)), blocks: 0, marks: 0 }));
  let [blocks, changedDays] = [0, 0];
  for (const [tenantId, pending] of [...start.pending].sort((a, b) => (a[0] < b[0] ? -1 : 1))) {
    while (pending.size > 0) {
      const done = await step((tx) => foldMarks(tx, tenantId, pending, budget));
      blocks += done.blocks;
      changedDays += done.marks;
    }
    blocks += (await step((tx) => foldTails(tx, tenantId))).blocks;
  }
  // PGlite has no autovacuum: without this its planner would never know the rollups' sizes.
  if (db.kind === "pglite" && blocks > 0) await db.exec(`analyze ${ANALYZED.join(", ")}`);
  return { foldedThrough: start.through, tenants: start.tenants, changedDays, blocks, ...measured };
}

/** Hourly at minute 5: the blocks of the account rollups (foldRollupBlocks). */
export function rollupBlocksJob(db: Db, options: Pick<FoldOptions, "maxBlocks"> = {}): Job {
  return {
    name: "rollup-blocks",
    description: "Writes the blocks of days of the account rollups from their days, in bounded transactions",
    cron: "5 * * * *",
    run: (now) => foldRollupBlocks(db, now, options),
  };
}
