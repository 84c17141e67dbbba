/**
 * Money in reports: what an answer's amounts are in, the currencies a picker offers, and which
 * cached answers a change of currency or rate makes stale. No imports but types, so the logic
 * tests load it as it is.
 */
import type { QueryClient } from "@tanstack/react-query";

/** A report answer's `meta`: the currency its amounts are in, and what was left out of them. */
export interface ReportMeta {
  timeZone: string;
  currency: string;
  /** Currencies whose amounts were left out of the sums for want of an exchange rate. */
  unconverted: { currency: string; conversions: number }[];
}

/** The currencies a picker offers, beside the tenant's own: the ones programs pay in most. */
export const COMMON_CURRENCIES = [
  "EUR",
  "USD",
  "GBP",
  "JPY",
  "CHF",
  "CAD",
  "AUD",
  "SEK",
  "NOK",
  "DKK",
  "PLN",
  "CZK",
  "HUF",
  "RON",
  "BRL",
  "MXN",
  "INR",
  "ZAR",
  "TRY",
  "NZD",
] as const;

/** The codes to offer: the common ones and any other given (the tenant's, the one in the address), A to Z, once each. */
export function currencyChoices(...also: (string | undefined)[]): string[] {
  const extra = also.filter((c): c is string => typeof c === "string" && c !== "").map((c) => c.toUpperCase());
  return [...new Set([...COMMON_CURRENCIES, ...extra])].sort();
}

/** The first key of every cached answer that holds amounts (the overview, reports, accounts and links). */
const MONEY_QUERIES: ReadonlySet<unknown> = new Set(["totals", "performance", "composites"]);

/** After a new reporting currency or exchange rate, every report's amounts are asked for again. */
export function invalidateReports(queryClient: QueryClient): Promise<void> {
  return queryClient.invalidateQueries({ predicate: (query) => MONEY_QUERIES.has(query.queryKey[0]) });
}
