/**
 * Exchange rates as units of a currency per 1 EUR, by day (docs/money-and-time.md, "Exchange
 * rates"): the euro reference rates (tenant_id '') and each tenant's own rates, which win for that
 * tenant. The rate in force on a day is the latest one dated on or before it; EUR is always 1.
 */
import type { Queryable } from "../../platform/db/index.js";
import { type Actor, recordAudit } from "../audit/index.js";

/** The tenant id of the euro reference rates (European Central Bank). */
export const REFERENCE = "";

/** Where a rate in force comes from: the tenant's own rates or the euro reference rates. */
export type RateSource = "tenant" | "reference";

/** Every rate in force on `date` for one tenant, EUR included (1, a reference rate). */
export interface RatesInForce {
  date: string;
  base: "EUR";
  /** Units of each currency per 1 EUR. */
  rates: Record<string, number>;
  sources: Record<string, RateSource>;
}

/** One stored rate: `rate` units of `currency` per 1 EUR on `day` (YYYY-MM-DD). */
export interface RateRow {
  currency: string;
  day: string;
  /** A decimal string (exact, as published) or a number. */
  rate: string | number;
}

/**
 * The rates in force on `$2` for tenant `$1`, in one statement whose work is bounded by the number
 * of currencies, not of stored days: the currencies are walked through the primary key (tenant,
 * currency, day) one index probe each (a loose index scan: a `distinct on (currency)` over the
 * rows would read every day of the 25-year history), and for each the latest tenant rate and the
 * latest reference rate on or before the day are one probe each. The later day wins; on the same
 * day, the tenant's.
 */
const IN_FORCE = `with recursive codes (currency) as (
    select ''::text
  union all
    select least(
        (select e.currency from exchange_rates e
          where e.tenant_id = '' and e.currency > c.currency order by e.currency limit 1),
        (select e.currency from exchange_rates e
          where e.tenant_id = $1 and e.currency > c.currency order by e.currency limit 1))
      from codes c where c.currency is not null
  )
  select c.currency, z.rate::text as rate, z.own
    from codes c
    cross join lateral (
      select y.rate, y.own from (
          (select r.rate, r.day, true as own from exchange_rates r
            where r.tenant_id = $1 and r.currency = c.currency and r.day <= $2::date order by r.day desc limit 1)
        union all
          (select r.rate, r.day, false from exchange_rates r
            where r.tenant_id = '' and r.currency = c.currency and r.day <= $2::date order by r.day desc limit 1)
        ) y
       order by y.day desc, y.own desc limit 1
    ) z
   where c.currency is not null and c.currency <> ''
   order by c.currency`;

/** Every rate in force on `day` (YYYY-MM-DD) for `tenantId`, EUR included; one statement. */
export async function ratesInForce(db: Queryable, tenantId: string, day: string): Promise<RatesInForce> {
  const rows = await db.query<{ currency: string; rate: string; own: boolean }>(IN_FORCE, [tenantId, day]);
  const entries: [string, number, RateSource][] = rows.map((r) => [
    r.currency,
    Number(r.rate),
    r.own ? "tenant" : "reference",
  ]);
  entries.push(["EUR", 1, "reference"]);
  entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  return {
    date: day,
    base: "EUR",
    rates: Object.fromEntries(entries.map(([code, rate]) => [code, rate])),
    sources: Object.fromEntries(entries.map(([code, , source]) => [code, source])),
  };
}

/** Rows per insert statement: a history backfill is hundreds of thousands of rows. */
const BATCH_ROWS = 5_000;

/**
 * Stores `rows` as `tenantId`'s rates (REFERENCE: the euro reference rates), replacing a stored
 * rate of the same currency and day; unchanged rows are not written again. Codes must be checked
 * by the caller (three capitals, never EUR). Batches of BATCH_ROWS rows, each its own statement,
 * in the order given. Returns how many rows were inserted or changed.
 */
export async function storeRates(db: Queryable, tenantId: string, rows: readonly RateRow[], at: Date): Promise<number> {
  let changed = 0;
  for (let start = 0; start < rows.length; start += BATCH_ROWS) {
    const batch = rows.slice(start, start + BATCH_ROWS);
    const written = await db.query<{ one: number }>(
      `insert into exchange_rates (tenant_id, currency, day, rate, updated_at)
       select $1, u.currency, u.day::date, u.rate::numeric, $5
         from unnest($2::text[], $3::text[], $4::text[]) as u (currency, day, rate)
       on conflict (tenant_id, currency, day)
       do update set rate = excluded.rate, updated_at = excluded.updated_at
        where exchange_rates.rate <> excluded.rate
       returning 1 as one`,
      [tenantId, batch.map((r) => r.currency), batch.map((r) => r.day), batch.map((r) => String(r.rate)), at],
    );
    changed += written.length;
  }
  return changed;
}

/** The tenant's own rates of `day` (codes checked by the caller), stored and audited; run it in a transaction. */
export async function setTenantRates(
  db: Queryable,
  tenantId: string,
  day: string,
  rates: Readonly<Record<string, number>>,
  change: { actor: Actor; at: Date; requestId?: string },
): Promise<void> {
  const rows = Object.entries(rates).map(([currency, rate]) => ({ currency, day, rate }));
  await storeRates(db, tenantId, rows, change.at);
  await recordAudit(db, {
    tenantId,
    actor: change.actor,
    action: "exchange_rates.set",
    subject: { type: "exchange_rates", id: day },
    details: { date: day, rates },
    ...(change.requestId === undefined ? {} : { requestId: change.requestId }),
    at: change.at,
  });
}

/**
 * The latest day of any euro reference rate, null when none is stored: the currencies walked as in
 * IN_FORCE and the last day of each, a few index probes each (a plain max(day) reads every row).
 */
const LATEST_REFERENCE_DAY = `with recursive codes (currency) as (
    select ''::text
  union all
    select (select e.currency from exchange_rates e
             where e.tenant_id = '' and e.currency > c.currency order by e.currency limit 1)
      from codes c where c.currency is not null
  )
  select max((select r.day from exchange_rates r
               where r.tenant_id = '' and r.currency = c.currency order by r.day desc limit 1))::text as day
    from codes c
   where c.currency is not null and c.currency <> ''`;

export async function latestReferenceDay(db: Queryable): Promise<string | null> {
  const [row] = await db.query<{ day: string | null }>(LATEST_REFERENCE_DAY);
  return row?.day ?? null;
}
