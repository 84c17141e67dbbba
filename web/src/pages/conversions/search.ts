import { isDay } from "../../dates.js";
import { isOneOf, positiveIntParam, textParam } from "../../search-params.js";
import { conversionTypeLabel } from "../../vocabulary.js";

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

/** A conversion's lifecycle statuses (the API's `status` enum), in the order a person meets them. */
export const CONVERSION_STATUSES = ["pending", "approved", "rejected", "reversed"] as const;
export type ConversionStatus = (typeof CONVERSION_STATUSES)[number];

export const PAGE_SIZE = 25;

/** The conversions list's filters and page, all in the URL so a view can be shared. */
export interface ConversionSearch {
  /** Occurred on or after this day (of the account's time zone). */
  from?: string;
  /** Occurred on or before this day (of the account's time zone). */
  to?: string;
  type?: ConversionType;
  clickId?: string;
  externalId?: string;
  /** The traffic source shown (its id); absent: every one. */
  source?: number;
  /** The statuses shown, a comma list in the order of CONVERSION_STATUSES (`pending,reversed`); absent: every one. */
  status?: string;
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
  const externalId = textParam(raw.externalId, 200);
  if (externalId !== undefined) out.externalId = externalId;
  const source = positiveIntParam(raw.source);
  if (source !== undefined && source > 0) out.source = source;
  const status = statusParam(statusList(raw.status));
  if (status !== undefined) out.status = status;
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
    ...(search.externalId ? { externalId: search.externalId } : {}),
    ...(search.source ? { trafficSourceId: String(search.source) } : {}),
    ...(search.status ? { status: search.status } : {}),
    ...(zone ? { timeZone: zone } : {}),
  };
}

export interface ConversionFilters {
  from?: string | undefined;
  to?: string | undefined;
  type?: ConversionType | undefined;
  clickId?: string | undefined;
  externalId?: string | undefined;
  source?: number | undefined;
  status?: readonly ConversionStatus[] | undefined;
}

/** The search with new filters: the page starts at the first again; empty filters leave the URL. */
export function withFilters(filters: ConversionFilters): ConversionSearch {
  const { status, ...rest } = filters;
  return parseConversionSearch({ ...rest, status: statusParam(status ?? []) });
}

const isStatus = (value: unknown): value is ConversionStatus => isOneOf(CONVERSION_STATUSES, value);

/**
 * The statuses an address names: a comma list in any case (`Pending,reversed`), or a list the
 * router parsed; unknown names are left out.
 */
export function statusList(value: unknown): ConversionStatus[] {
  const parts = Array.isArray(value) ? value : typeof value === "string" ? value.split(",") : [];
  const named = new Set(parts.map((p) => (typeof p === "string" ? p.trim().toLowerCase() : "")));
  return CONVERSION_STATUSES.filter((s) => named.has(s));
}

/**
 * The statuses as the address and the API take them: a comma list in CONVERSION_STATUSES' order;
 * none (every status) leaves it out.
 */
function statusParam(statuses: readonly ConversionStatus[]): string | undefined {
  const chosen = CONVERSION_STATUSES.filter((s) => statuses.includes(s));
  return chosen.length === 0 ? undefined : chosen.join(",");
}

const STATUS_LABELS: Record<ConversionStatus, string> = {
  pending: "Pending",
  approved: "Approved",
  rejected: "Rejected",
  reversed: "Reversed",
};

/** A status as a person reads it: reversed -> "Reversed". */
export function statusLabel(status: string): string {
  return isStatus(status) ? STATUS_LABELS[status] : status;
}

/** A type name as a person reads it, from the dashboard's one vocabulary: FirstTimeDeposit -> "First-time deposit". */
export function typeLabel(type: string): string {
  return conversionTypeLabel(type);
}

/** An instant as a short UTC date and time, for a table column headed "(UTC)": 2026-11-26 09:59. */
export function shortDateTime(iso: string): string {
  const date = new Date(iso);
  return Number.isNaN(date.getTime()) ? iso : date.toISOString().slice(0, 16).replace("T", " ");
}
