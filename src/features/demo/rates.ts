import type { Queryable } from "../../platform/db/index.js";
import { DAY_MS } from "../../platform/durations.js";
import { type RateRow, storeRates } from "../exchange-rates/index.js";

/** Days of demo rates before the seed's day: a year and more, the longest default report window. */
const DEMO_RATE_DAYS = 400;

/** Each demo currency: its level in units per 1 EUR, decimals, and two slow waves (amplitude, period in days, phase). */
const CURVES = [
  {
    currency: "USD",
    level: 1.1,
    decimals: 4,
    waves: [
      [0.03, 97, 0],
      [0.008, 11.3, 1],
    ],
  },
  {
    currency: "GBP",
    level: 0.855,
    decimals: 4,
    waves: [
      [0.015, 131, 1],
      [0.005, 17.9, 2],
    ],
  },
  {
    currency: "SEK",
    level: 11.4,
    decimals: 4,
    waves: [
      [0.025, 113, 0.7],
      [0.006, 15.1, 1.4],
    ],
  },
  {
    currency: "JPY",
    level: 163,
    decimals: 2,
    waves: [
      [0.04, 89, 2],
      [0.01, 13.7, 0.5],
    ],
  },
] as const;

/** The demo rate of a currency on the day `epochDay` (days since 1970-01-01): the same day, the same rate. */
function rateOn(curve: (typeof CURVES)[number], epochDay: number): string {
  const swing = curve.waves.reduce((sum, [amplitude, period, phase]) => {
    return sum + amplitude * Math.sin((2 * Math.PI * epochDay) / period + phase);
  }, 0);
  return (curve.level * (1 + swing)).toFixed(curve.decimals);
}

/**
 * The demo tenant's own exchange rates (USD, GBP, SEK and JPY per 1 EUR) for every working day of the
 * DEMO_RATE_DAYS days up to `now`: plausible, and deterministic (a function of the day alone), so
 * its reports convert USD, GBP, SEK and EUR amounts without the ECB's rates (no network needed). They
 * are the tenant's own, not reference rates: made-up rates never pass for the ECB's in other
 * tenants' reports, the exchange-rates job still backfills the real history, and
 * `npm run demo:reset` removes them with the tenant.
 */
export async function seedDemoRates(db: Queryable, tenantId: string, now: Date): Promise<number> {
  const today = Math.floor(now.getTime() / DAY_MS);
  const rows: RateRow[] = [];
  for (let epochDay = today - DEMO_RATE_DAYS; epochDay <= today; epochDay += 1) {
    const weekday = new Date(epochDay * DAY_MS).getUTCDay();
    if (weekday === 0 || weekday === 6) continue;
    const day = new Date(epochDay * DAY_MS).toISOString().slice(0, 10);
    for (const curve of CURVES) rows.push({ currency: curve.currency, day, rate: rateOn(curve, epochDay) });
  }
  return storeRates(db, tenantId, rows, now);
}
