import type { RetentionRule } from "../../platform/retention.js";

/** Raw events are kept 120 days (spec 8, event history); the rollups reports read are kept. */
export const TRACKING_RETENTION: RetentionRule[] = [
  { table: "clicks", column: "at", days: 120 },
  { table: "conversions", column: "occurred_at", days: 120 },
  { table: "page_views", column: "at", days: 120 },
  // Only today's first visits decide unique clicks; yesterday's is kept for clicks near midnight.
  { table: "click_visitors", column: "day", days: 2 },
];
