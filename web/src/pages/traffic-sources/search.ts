import { dayRangeParams } from "../../dates.js";
import { compact, idParam, isOneOf, positiveIntParam } from "../../search-params.js";

/** A traffic source's postbacks take the delivery statuses of outgoing webhooks, but Held (they are not metered). */
export const POSTBACK_STATUSES = ["Queued", "Retrying", "Delivered", "Failed", "Cancelled", "Paused"] as const;
export type PostbackStatus = (typeof POSTBACK_STATUSES)[number];

/** What one Google Ads upload came to. */
export const UPLOAD_STATUSES = ["Sent", "Partly", "Failed", "Retrying"] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];

/**
 * The conversion types a source's postback or a Google Ads conversion action can be set for:
 * commission types are calculated by the service and never reported back to a network.
 */
export const REPORTED_TYPES = ["Signup", "FirstTimeDeposit", "Qualifier", "Deposit"] as const;

/** Rows per page of the lists; the API allows up to 500. */
export const PAGE_SIZE = 50;
/** Attempts per page of one postback. */
export const ATTEMPTS_PAGE_SIZE = 20;

export interface PostbackSearch {
  status?: PostbackStatus;
  conversionId?: string;
  /** UTC days, both included. */
  dateFrom?: string;
  dateTo?: string;
  offset?: number;
}

/** The postbacks list's filters from the address; a from after the to is dropped rather than refused. */
export function parsePostbackSearch(search: Record<string, unknown>): PostbackSearch {
  return compact<PostbackSearch>({
    status: isOneOf(POSTBACK_STATUSES, search.status) ? search.status : undefined,
    conversionId: idParam(search.conversionId),
    ...dayRangeParams(search),
    offset: positiveIntParam(search.offset),
  });
}

export interface UploadSearch {
  status?: UploadStatus;
  offset?: number;
}

export function parseUploadSearch(search: Record<string, unknown>): UploadSearch {
  return compact<UploadSearch>({
    status: isOneOf(UPLOAD_STATUSES, search.status) ? search.status : undefined,
    offset: positiveIntParam(search.offset),
  });
}

export interface OffsetSearch {
  offset?: number;
}

export function parseOffsetSearch(search: Record<string, unknown>): OffsetSearch {
  return compact<OffsetSearch>({ offset: positiveIntParam(search.offset) });
}

/** Payout share as typed: empty is none (null), a number is a percentage; undefined for text that is no number. */
export function payoutShareOf(text: string): number | null | undefined {
  const trimmed = text.trim();
  if (trimmed === "") return null;
  const n = Number(trimmed.replace(",", "."));
  return Number.isFinite(n) ? n : undefined;
}

/** Conversion type to action id, the empty ones left out. */
export function actionsOf(rows: Record<string, string>): Record<string, string> {
  return Object.fromEntries(
    Object.entries(rows)
      .map(([type, id]) => [type, id.trim()] as const)
      .filter(([, id]) => id !== ""),
  );
}
