import { isDay } from "../../dates.js";
import { isOneOf, positiveIntParam, textParam } from "../../search-params.js";

/** The conversion types the list filters by (the API's `type` enum). */
export const CONVERSION_TYPES = [
  "Click",
  "Signup",
  "FirstTimeDeposit",
  "Qualifier",
  "Deposit",
  "CpaCommission",
  "RevShareCommission",
  "FlatFeeCommission",
] as const;
export type ConversionType = (typeof CONVERSION_TYPES)[number];

export const PAGE_SIZE = 25;

/** The conversions list's filters and page, all in the URL so a view can be shared. */
export interface ConversionSearch {
  /** Occurred on or after this day (of the account's time zone). */
  from?: string;
  /** Occurred on or before this day (of the account's time zone). */
  to?: string;
  type?: ConversionType;
  clickId?: string;
  offset?: number;
}

const isType = (value: unknown): value is ConversionType => isOneOf(CONVERSION_TYPES, value);

/** The search params as the URL gives them, kept only where the API would accept them. */
export function parseConversionSearch(raw: Record<string, unknown>): ConversionSearch {
  const out: ConversionSearch = {};
  const from = isDay(raw.from) ? raw.from : undefined;
  const to = isDay(raw.to) ? raw.to : undefined;
  // A reversed range would find nothing: keep only its start.
  if (from) out.from = from;
  if (to && !(from && from > to)) out.to = to;
  if (isType(raw.type)) out.type = raw.type;
  const clickId = textParam(raw.clickId, 100);
  if (clickId !== undefined) out.clickId = clickId;
  const offset = positiveIntParam(raw.offset);
  if (offset !== undefined) out.offset = offset;
  return out;
}

/**
 * GET /api/v1/conversions's query for what the URL asks. `zone`, the account's when known, is
 * named so the days it filters by are the ones the page says; unknown, the API reads them in it anyway.
 */
export function conversionQuery(search: ConversionSearch, zone?: string) {
  return {
    offset: search.offset ?? 0,
    limit: PAGE_SIZE,
    ...(search.from ? { dateFrom: search.from } : {}),
    ...(search.to ? { dateTo: search.to } : {}),
    ...(search.type ? { type: search.type } : {}),
    ...(search.clickId ? { clickId: search.clickId } : {}),
    ...(zone ? { timeZone: zone } : {}),
  };
}

/** The search with new filters: the page starts at the first again; empty filters leave the URL. */
export function withFilters(filters: {
  from?: string | undefined;
  to?: string | undefined;
  type?: ConversionType | undefined;
  clickId?: string | undefined;
}): ConversionSearch {
  return parseConversionSearch(filters);
}

const TYPE_LABELS: Record<ConversionType, string> = {
  Click: "Click",
  Signup: "Signup",
  FirstTimeDeposit: "First-time deposit",
  Qualifier: "Qualifier",
  Deposit: "Deposit",
  CpaCommission: "CPA commission",
  RevShareCommission: "RevShare commission",
  FlatFeeCommission: "Flat fee commission",
};

/** A type name as a person reads it: FirstTimeDeposit -> "First-time deposit". */
export function typeLabel(type: string): string {
  return isType(type) ? TYPE_LABELS[type] : type;
}

/** An instant as a short UTC date and time, for a table column headed "(UTC)": 2026-11-26 09:59. */
export function shortDateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 16).replace("T", " ");
}
