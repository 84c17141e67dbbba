import { isDay } from "../../dates.js";
import { compact, idParam, isOneOf, positiveIntParam, textParam } from "../../search-params.js";

export const PAGE_SIZE = 25;

export const DEVICES = ["desktop", "mobile", "tablet", "other"] as const;
export type Device = (typeof DEVICES)[number];

export const OUTCOMES = ["recorded", "duplicate", "statusChanged", "refused"] as const;
export type Outcome = (typeof OUTCOMES)[number];

/** Days of the account's time zone, both included; a reversed range keeps only its start. */
interface Days {
  from?: string | undefined;
  to?: string | undefined;
}

function daysOf(raw: Record<string, unknown>): Days {
  const from = isDay(raw.from) ? raw.from : undefined;
  const to = isDay(raw.to) && !(from && from > raw.to) ? raw.to : undefined;
  return { from, to };
}

/** The click log's filters and page, all in the URL so a view can be shared (a report row links here). */
export interface ClickLogSearch extends Days {
  link?: number | undefined;
  source?: number | undefined;
  tracker?: number | undefined;
  country?: string | undefined;
  device?: Device | undefined;
  /** "yes": bots' clicks only; "no": people's only; absent: both. */
  bot?: "yes" | "no" | undefined;
  clickId?: string | undefined;
  offset?: number | undefined;
}

export function parseClickLogSearch(raw: Record<string, unknown>): ClickLogSearch {
  const country =
    typeof raw.country === "string" && /^[A-Za-z]{2}$/.test(raw.country) ? raw.country.toUpperCase() : undefined;
  return compact<ClickLogSearch>({
    ...daysOf(raw),
    link: positiveIntParam(raw.link),
    source: positiveIntParam(raw.source),
    tracker: positiveIntParam(raw.tracker),
    country,
    device: isOneOf(DEVICES, raw.device) ? raw.device : undefined,
    bot: raw.bot === "yes" || raw.bot === "no" ? raw.bot : undefined,
    clickId: idParam(raw.clickId),
    offset: positiveIntParam(raw.offset),
  });
}

/** GET /api/v1/clicks's query for what the URL asks, the days read in `zone` when known. */
export function clickLogQuery(search: ClickLogSearch, zone: string | undefined) {
  return {
    offset: search.offset ?? 0,
    limit: PAGE_SIZE,
    ...(search.from ? { dateFrom: search.from } : {}),
    ...(search.to ? { dateTo: search.to } : {}),
    ...(search.link ? { linkId: search.link } : {}),
    ...(search.source ? { trafficSourceId: search.source } : {}),
    ...(search.tracker ? { trackerId: search.tracker } : {}),
    ...(search.country ? { country: search.country } : {}),
    ...(search.device ? { device: search.device } : {}),
    ...(search.bot ? { bot: search.bot === "yes" } : {}),
    ...(search.clickId ? { clickId: search.clickId } : {}),
    ...(zone ? { timeZone: zone } : {}),
  };
}

/** The postback log's filters and page. */
export interface PostbackLogSearch extends Days {
  outcome?: Outcome | undefined;
  type?: string | undefined;
  clickId?: string | undefined;
  externalId?: string | undefined;
  offset?: number | undefined;
}

export function parsePostbackLogSearch(raw: Record<string, unknown>): PostbackLogSearch {
  return compact<PostbackLogSearch>({
    ...daysOf(raw),
    outcome: isOneOf(OUTCOMES, raw.outcome) ? raw.outcome : undefined,
    type: textParam(raw.type, 100),
    clickId: idParam(raw.clickId),
    externalId: textParam(raw.externalId, 200),
    offset: positiveIntParam(raw.offset),
  });
}

export function postbackLogQuery(search: PostbackLogSearch, zone: string | undefined) {
  return {
    offset: search.offset ?? 0,
    limit: PAGE_SIZE,
    ...(search.from ? { dateFrom: search.from } : {}),
    ...(search.to ? { dateTo: search.to } : {}),
    ...(search.outcome ? { outcome: search.outcome } : {}),
    ...(search.type ? { type: search.type } : {}),
    ...(search.clickId ? { clickId: search.clickId } : {}),
    ...(search.externalId ? { externalId: search.externalId } : {}),
    ...(zone ? { timeZone: zone } : {}),
  };
}

const OUTCOME_LABELS: Record<Outcome, string> = {
  recorded: "Recorded",
  duplicate: "Duplicate",
  statusChanged: "Status changed",
  refused: "Refused",
};

export const outcomeLabel = (outcome: string): string =>
  isOneOf(OUTCOMES, outcome) ? OUTCOME_LABELS[outcome] : outcome;

const BOT_REASONS: Record<string, string> = {
  user_agent: "Bot user agent",
  data_center: "Data-center address",
};

export const botReasonLabel = (reason: string | null): string =>
  reason === null ? "Person" : (BOT_REASONS[reason] ?? reason);
