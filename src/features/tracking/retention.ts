import type { RetentionRule } from "../../platform/retention.js";

/**
 * Raw events are kept this many days (docs/tracking-and-postbacks.md); the rollups reports read are kept.
 * A conversion may not be dated further back (conversion-input.ts): once deleted, its externalId
 * would be free again and the same conversion could be counted twice.
 */
export const RAW_EVENT_RETENTION_DAYS = 120;

export const TRACKING_RETENTION: RetentionRule[] = [
  { table: "clicks", column: "at", days: RAW_EVENT_RETENTION_DAYS },
  { table: "conversions", column: "occurred_at", days: RAW_EVENT_RETENTION_DAYS },
  { table: "page_views", column: "at", days: RAW_EVENT_RETENTION_DAYS },
  // Only today's first visits decide unique clicks; yesterday's is kept for clicks near midnight.
  { table: "click_visitors", column: "day", days: 2 },
];
