import { DAY_MS } from "../../platform/durations.js";

/** At most this many events per events:ingest request (Google's limit). */
export const MAX_EVENTS_PER_REQUEST = 2000;

/**
 * A click's conversions are accepted for 90 days after it: the longest window a Google Ads
 * conversion action can have, and its default. Past it an event is refused and never retried.
 */
export const CLICK_WINDOW_MS = 90 * DAY_MS;

const GCLID = /^[A-Za-z0-9_-]{1,512}$/;
const CURRENCY = /^[A-Z]{3}$/;

export type Consent = { adUserData?: ConsentStatus; adPersonalization?: ConsentStatus };
export type ConsentStatus = "CONSENT_GRANTED" | "CONSENT_DENIED";

/** What one upload needs of an integration. */
export interface Destination {
  accountId: string;
  loginAccountId: string | null;
  conversionActions: Record<string, string>;
  consent: Consent | null;
}

/** A queued conversion, as the uploader reads it. */
export interface QueuedItem {
  conversionId: string;
  conversionType: string;
  gclid: string;
  clickAt: Date;
  occurredAt: Date;
  value: number | null;
  currency: string | null;
}

/** Whether the click is still inside the conversion window at `now`. */
export const insideWindow = (item: QueuedItem, now: Date): boolean =>
  now.getTime() - item.clickAt.getTime() <= CLICK_WINDOW_MS;

/**
 * Why Google would refuse this event whatever we do later, or null: checked before sending,
 * because one invalid event makes Google reject its whole request (no partial failure).
 */
export function refusalOf(item: QueuedItem, destination: Destination, now: Date): string | null {
  if (destination.conversionActions[item.conversionType] === undefined) {
    return `No conversion action is set for ${item.conversionType}`;
  }
  if (!GCLID.test(item.gclid)) return "The gclid is not a Google click id";
  if (item.occurredAt.getTime() < item.clickAt.getTime()) return "The conversion is dated before its click";
  if (!insideWindow(item, now)) return "The click is older than the conversion window (90 days)";
  if (item.value !== null) {
    if (!Number.isFinite(item.value) || item.value < 0) return "The conversion value is negative";
    if (item.currency === null || !CURRENCY.test(item.currency)) return "The currency is not an ISO 4217 code";
  }
  return null;
}

const account = (accountId: string) => ({ accountType: "GOOGLE_ADS", accountId });

/**
 * The IngestEventsRequest for these (valid) events: one destination per conversion action,
 * referenced by each event; our conversion id as transactionId, so Google drops a repeat.
 */
export function ingestRequest(destination: Destination, items: readonly QueuedItem[]): Record<string, unknown> {
  const actions = [...new Set(items.map((item) => destination.conversionActions[item.conversionType] ?? ""))];
  return {
    destinations: actions.map((action) => ({
      reference: action,
      operatingAccount: account(destination.accountId),
      ...(destination.loginAccountId === null ? {} : { loginAccount: account(destination.loginAccountId) }),
      productDestinationId: action,
    })),
    ...(destination.consent === null ? {} : { consent: destination.consent }),
    events: items.map((item) => ({
      destinationReferences: [destination.conversionActions[item.conversionType]],
      transactionId: item.conversionId,
      eventTimestamp: item.occurredAt.toISOString(),
      eventSource: "WEB",
      adIdentifiers: { gclid: item.gclid },
      ...(item.value === null ? {} : { conversionValue: item.value, currency: item.currency }),
    })),
  };
}

/** The event index a violation's field names (`events[12].adIdentifiers.gclid`), or null. */
export function eventIndexOf(field: string): number | null {
  const match = /^events\[(\d+)\]/.exec(field);
  return match ? Number(match[1]) : null;
}
