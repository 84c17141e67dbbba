import type { RetentionRule } from "../../platform/retention.js";

/** Delivery history (events and their attempts) is kept this many days (docs/outgoing-webhooks.md). */
export const WEBHOOK_HISTORY_DAYS = 120;

/**
 * Only events that are done: one still Queued, Retrying, Held or Paused (or leased by a worker,
 * which it is only while Queued or Retrying) is never purged, however old. Attempts go with their
 * event (foreign key, on delete cascade).
 */
export const WEBHOOK_RETENTION: RetentionRule[] = [
  {
    table: "webhook_events",
    column: "created_at",
    days: WEBHOOK_HISTORY_DAYS,
    where: "status in ('Delivered', 'Failed', 'Cancelled')",
  },
];
