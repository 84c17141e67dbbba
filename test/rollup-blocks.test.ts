import { describe, expect, it } from "vitest";
import { type BlockState, blocksOf, windowPieces } from "../src/features/reports/sources.js";
import { EPOCH_DAYS, ROLLUP_SPANS, TAIL_DAYS } from "../src/features/tracking/rollups.js";
import { DAY_MS } from "../src/platform/durations.js";
import { prng } from "./helpers/workload.js";

// How a report window is cut into blocks of the spanned rollups (src/features/reports/sources.ts),
// checked on its own, without a database: every window tiled exactly, prefixes and tails used
// where they fit. The rollups' contents: reports-rollups.test.ts.

describe("blocks of days", () => {
  it("tile any window exactly with aligned blocks of the rollup spans", () => {
    const rnd = prng(64);
    for (let n = 0; n < 500; n++) {
      const length = rnd.int(1, 400);
      const from = rnd.int(-400, 30_000);
      const blocks = blocksOf(
        new Date(from * DAY_MS).toISOString().slice(0, 10),
        new Date((from + length - 1) * DAY_MS).toISOString().slice(0, 10),
      );
      let next = from;
      for (const block of blocks) {
        const start = Date.parse(`${block.day}T00:00:00Z`) / DAY_MS;
        expect(start).toBe(next);
        expect(ROLLUP_SPANS).toContain(block.span);
        expect(((start % block.span) + block.span) % block.span).toBe(0);
        next = start + block.span;
      }
      expect(next).toBe(from + length);
    }
    // The longest blocks that fit: 2026-06-04 is 20,608 days (322 x 64) after 1970-01-01.
    expect(blocksOf("2026-06-01", "2026-06-30")).toEqual([
      { span: 1, day: "2026-06-01" },
      { span: 2, day: "2026-06-02" },
      { span: 16, day: "2026-06-04" },
      { span: 8, day: "2026-06-20" },
      { span: 2, day: "2026-06-28" },
      { span: 1, day: "2026-06-30" },
    ]);
    // Only current blocks: written through 06-25, 06-10 changed since; shorter blocks instead.
    const dayNumber = (d: string) => Date.parse(`${d}T00:00:00Z`) / DAY_MS;
    const state = {
      foldedThrough: dayNumber("2026-06-25"),
      tailsThrough: Number.NEGATIVE_INFINITY,
      dirty: [dayNumber("2026-06-10")],
    };
    expect(blocksOf("2026-06-01", "2026-06-30", state).map((b) => `${b.span}@${b.day.slice(5)}`)).toEqual([
      "1@06-01",
      "2@06-02",
      "4@06-04",
      "2@06-08",
      "1@06-10",
      "1@06-11",
      "8@06-12",
      "4@06-20",
      "2@06-24",
      "1@06-26",
      "1@06-27",
      "1@06-28",
      "1@06-29",
      "1@06-30",
    ]);
  });

  it("read any window as signed pieces that sum to exactly its days, current ones only", () => {
    const rnd = prng(65);
    const isAligned = (span: number, start: number) =>
      (ROLLUP_SPANS as readonly number[]).includes(span) && ((start % span) + span) % span === 0;
    let tailed = 0;
    for (let n = 0; n < 1000; n++) {
      const length = rnd.int(1, 200);
      const from = rnd.int(20_000, 20_400);
      const to = from + length - 1;
      const foldedThrough = rnd.int(from - 70, to + 5);
      const state = {
        foldedThrough,
        // Tails on the last folded day, on one before it (a later run not yet done), or none yet.
        tailsThrough: rnd.pick([foldedThrough, foldedThrough, foldedThrough - 1, Number.NEGATIVE_INFINITY]),
        dirty: Array.from({ length: rnd.int(0, 3) }, () => rnd.int(from - 70, to)),
      };
      const [fromDay, toDay] = [from, to].map((d) => new Date(d * DAY_MS).toISOString().slice(0, 10)) as [
        string,
        string,
      ];
      const pieces = windowPieces(fromDay, toDay, state);
      const times = new Map<number, number>();
      for (const piece of pieces) {
        const start = Date.parse(`${piece.day}T00:00:00Z`) / DAY_MS;
        // A day, an aligned block, a prefix of its epoch or a tail; current when longer than a day.
        const isTail = start + piece.span - 1 === state.tailsThrough && piece.span <= TAIL_DAYS;
        expect(isAligned(piece.span, start) || (start % EPOCH_DAYS === 0 && piece.span <= EPOCH_DAYS) || isTail).toBe(
          true,
        );
        if (isTail) tailed++;
        if (piece.span > 1) {
          expect(start + piece.span - 1).toBeLessThanOrEqual(state.foldedThrough);
          expect(state.dirty.filter((d) => d >= start && d < start + piece.span)).toEqual([]);
        }
        for (let d = start; d < start + piece.span; d++) times.set(d, (times.get(d) ?? 0) + piece.sign);
      }
      for (const [d, count] of times) expect(count, `day ${d}`).toBe(d >= from && d <= to ? 1 : 0);
      for (let d = from; d <= to; d++) expect(times.get(d)).toBe(1);
      // Never more pieces than the aligned blocks alone, nor than without tails.
      expect(pieces.length).toBeLessThanOrEqual(blocksOf(fromDay, toDay, state).length);
      const untailed = windowPieces(fromDay, toDay, { ...state, tailsThrough: Number.NEGATIVE_INFINITY });
      expect(pieces.length).toBeLessThanOrEqual(untailed.length);
    }
    expect(tailed).toBeGreaterThan(100);
    // 2026-06-04 starts an epoch (20,608 = 322 x 64). Folded through 06-29: the days up to it are
    // its prefix, 06-30 a day; 06-01 to 06-03 stay aligned blocks (a tie: two pieces either way).
    const dayNumber = (d: string) => Date.parse(`${d}T00:00:00Z`) / DAY_MS;
    const folded: BlockState = {
      foldedThrough: dayNumber("2026-06-29"),
      tailsThrough: Number.NEGATIVE_INFINITY,
      dirty: [],
    };
    const shown = (from: string, to: string, state: BlockState) =>
      windowPieces(from, to, state).map((p) => `${p.sign < 0 ? "-" : ""}${p.span}@${p.day.slice(5)}`);
    expect(shown("2026-06-01", "2026-06-30", folded)).toEqual(["1@06-01", "2@06-02", "26@06-04", "1@06-30"]);
    // Within the epoch: the prefix through 06-29 minus the prefix through 06-09.
    expect(shown("2026-06-10", "2026-06-30", folded)).toEqual(["26@06-04", "-6@06-04", "1@06-30"]);
    // 06-28 changed since the fold: the prefix through 06-27, then days (7 aligned blocks else).
    const changed = { ...folded, dirty: [dayNumber("2026-06-28")] };
    expect(shown("2026-06-10", "2026-06-30", changed)).toEqual([
      "24@06-04",
      "-6@06-04",
      "1@06-28",
      "1@06-29",
      "1@06-30",
    ]);
    // 06-20 changed instead: a tie (8 pieces either way), the aligned blocks.
    expect(shown("2026-06-10", "2026-06-30", { ...folded, dirty: [dayNumber("2026-06-20")] })[0]).toBe("2@06-10");

    // With the tails through 06-29: a window ending today is its tail and today.
    const tails = { ...folded, tailsThrough: dayNumber("2026-06-29") };
    expect(shown("2026-06-01", "2026-06-30", tails)).toEqual(["29@06-01", "1@06-30"]);
    expect(shown("2026-06-10", "2026-06-30", tails)).toEqual(["20@06-10", "1@06-30"]);
    // A tie with the prefix (the same block, 26@06-04): either way it is the same two pieces.
    expect(shown("2026-06-04", "2026-06-30", tails)).toEqual(["26@06-04", "1@06-30"]);
    // Longer than a tail (the 64-day tail from 04-27, and 04-02 to 04-26 as a prefix minus a day):
    // four pieces with a subtraction either way, a tie kept as without tails.
    expect(shown("2026-04-02", "2026-06-30", tails)).toEqual(["64@04-01", "-1@04-01", "26@06-04", "1@06-30"]);
    // From 04-24 on: 04-24 to 04-26 as a day and an aligned block, then the tail: no subtraction.
    expect(shown("2026-04-24", "2026-06-30", tails)).toEqual(["1@04-24", "2@04-25", "64@04-27", "1@06-30"]);
    // 06-20 changed since: the tail after it, the days up to it as without tails (5 pieces, not 8).
    expect(shown("2026-06-10", "2026-06-30", { ...tails, dirty: [dayNumber("2026-06-20")] })).toEqual([
      "2@06-10",
      "8@06-12",
      "1@06-20",
      "9@06-21",
      "1@06-30",
    ]);
    // Not holding the tails' last day: no tail.
    expect(shown("2026-06-10", "2026-06-28", tails)).toEqual(shown("2026-06-10", "2026-06-28", folded));
  });
});
