import type { FxRatesSources } from "../../config.js";
import type { Queryable } from "../../platform/db/index.js";
import { DAY_MS, SECOND_MS } from "../../platform/durations.js";
import type { Job } from "../../platform/jobs.js";
import { readRatesFile } from "./ecb.js";
import { latestReferenceDay, REFERENCE, storeRates } from "./service.js";

/** The ECB publishes each working day's rates around 16:00 CET (15:00 UTC in winter, 14:00 in summer). */
const PUBLISHED_HOUR_UTC = 15;
/** A stored reference history whose last day is older than this gets the history file again (a gap to fill). */
const STALE_DAYS = 7;

/** Bounds of one fetch: the daily file is about 2 KB, the 90-day one 150 KB, the history about 7 MB. */
export interface RatesFetchBounds {
  dailyMaxBytes: number;
  historyMaxBytes: number;
  dailyTimeoutMs: number;
  historyTimeoutMs: number;
}

const DEFAULT_BOUNDS: RatesFetchBounds = {
  dailyMaxBytes: 4 * 1024 * 1024,
  historyMaxBytes: 64 * 1024 * 1024,
  dailyTimeoutMs: 30 * SECOND_MS,
  historyTimeoutMs: 120 * SECOND_MS,
};

const ymd = (at: Date | number) => new Date(at).toISOString().slice(0, 10);

/**
 * The latest ECB working day (Monday to Friday) whose rates should be out at `now`: today from
 * 15:00 UTC, else the working day before. On a TARGET holiday no rates come, and the job tries
 * again each hour until the next day's are out.
 */
function expectedDay(now: Date): string {
  let at = now.getTime() - (now.getUTCHours() < PUBLISHED_HOUR_UTC ? DAY_MS : 0);
  while ([0, 6].includes(new Date(at).getUTCDay())) at -= DAY_MS;
  return ymd(at);
}

/**
 * The `exchange-rates` job: hourly, it fetches the euro reference rates unless the stored ones
 * already hold the latest working day's (so it tries each hour until the day's rates are in, and
 * a failure waits for the next hour). With no reference rate stored, or none in the last 7 days,
 * it reads the history file (FX_RATES_HISTORY_URL) to backfill; otherwise the daily file
 * (FX_RATES_URL). Rows are stored under tenant_id ''. A failed fetch or a file it cannot read
 * throws, naming the host only: the scheduler logs it and the stored rates stay as they were.
 * Nothing waits for it: the first run is the first hourly slot after the start.
 */
export function exchangeRatesJob(
  db: Queryable,
  sources: FxRatesSources & { url: string },
  bounds: Partial<RatesFetchBounds> = {},
): Job {
  const limits = { ...DEFAULT_BOUNDS, ...bounds };
  return {
    name: "exchange-rates",
    description:
      "Hourly until the day's rates are in: fetches the ECB's euro reference rates (FX_RATES_URL; the history, FX_RATES_HISTORY_URL, when none is stored)",
    cron: "40 * * * *",
    async run(now) {
      const latest = await latestReferenceDay(db);
      const expected = expectedDay(now);
      if (latest !== null && latest >= expected) return { skipped: "up to date", latestDay: latest };
      const stale = latest === null || latest < ymd(now.getTime() - STALE_DAYS * DAY_MS);
      const history = stale && sources.historyUrl !== undefined;
      const url = history && sources.historyUrl !== undefined ? sources.historyUrl : sources.url;
      const rows = await readRatesFile(url, {
        maxBytes: history ? limits.historyMaxBytes : limits.dailyMaxBytes,
        timeoutMs: history ? limits.historyTimeoutMs : limits.dailyTimeoutMs,
      });
      const stored = await storeRates(db, REFERENCE, rows, now);
      const days = new Set(rows.map((r) => r.day));
      return {
        file: history ? "history" : "daily",
        host: new URL(url).host,
        days: days.size,
        rates: rows.length,
        stored,
        latestDay: [latest ?? "", ...days].sort().at(-1),
      };
    },
  };
}
