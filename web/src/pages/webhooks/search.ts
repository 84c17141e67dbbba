import { dayRangeParams } from "../../dates.js";
import { compact, idParam, isOneOf, positiveIntParam, textParam } from "../../search-params.js";

/** The statuses the API gives webhooks and delivery events (the list filters offer exactly these). */
export const WEBHOOK_STATUSES = ["Enabled", "Disabled", "Suspended"] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];
export const EVENT_STATUSES = ["Queued", "Retrying", "Delivered", "Failed", "Cancelled", "Held", "Paused"] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

/** Rows per page of the lists; the API allows up to 500. */
export const PAGE_SIZE = 50;
/** Attempts per page on an event's page. */
export const ATTEMPTS_PAGE_SIZE = 20;

export interface WebhookListSearch {
  status?: WebhookStatus;
  search?: string;
  offset?: number;
}

export function parseWebhookListSearch(search: Record<string, unknown>): WebhookListSearch {
  return compact<WebhookListSearch>({
    status: isOneOf(WEBHOOK_STATUSES, search.status) ? search.status : undefined,
    search: textParam(search.search, 200),
    offset: positiveIntParam(search.offset),
  });
}

export interface DeliverySearch {
  status?: EventStatus;
  webhookId?: string;
  conversionId?: string;
  clickId?: string;
  /** UTC days, both included (the API reads a date as the whole UTC day). */
  dateFrom?: string;
  dateTo?: string;
  offset?: number;
}

/** The delivery log's filters from the address; a from after the to is dropped rather than refused by the API. */
export function parseDeliverySearch(search: Record<string, unknown>): DeliverySearch {
  return compact<DeliverySearch>({
    status: isOneOf(EVENT_STATUSES, search.status) ? search.status : undefined,
    webhookId: idParam(search.webhookId),
    conversionId: idParam(search.conversionId),
    clickId: idParam(search.clickId),
    ...dayRangeParams(search),
    offset: positiveIntParam(search.offset),
  });
}

/** The query the API takes for a filter of the delivery log. */
export function deliveryQuery(
  search: DeliverySearch,
): Omit<DeliverySearch, "offset"> & { offset: number; limit: number } {
  const { offset, ...filters } = search;
  return { ...filters, offset: offset ?? 0, limit: PAGE_SIZE };
}

export interface AttemptSearch {
  offset?: number;
}

export function parseAttemptSearch(search: Record<string, unknown>): AttemptSearch {
  return compact<AttemptSearch>({ offset: positiveIntParam(search.offset) });
}

/** How soon a retry must be due for a page to watch for it; later ones are seen on the next visit. */
export const WATCH_AHEAD_MS = 60_000;

/**
 * Whether an event will change soon on its own: queued (the worker sends it at once) or retrying
 * within a minute. Pages showing one ask the API again every few seconds; a retry an hour away
 * is not worth asking about every few seconds for an hour.
 */
export function changesSoon(event: { status: string; nextAttemptAt: string | null }, now: number): boolean {
  if (event.status === "Queued") return true;
  if (event.status !== "Retrying" || event.nextAttemptAt === null) return false;
  return Date.parse(event.nextAttemptAt) - now <= WATCH_AHEAD_MS;
}
