import type { RetentionRule } from "../../platform/retention.js";

/** Delivery history is kept 120 days, like the event history (spec 8); attempts go with their message. */
export const NOTIFICATION_RETENTION: RetentionRule[] = [
  { table: "notification_messages", column: "created_at", days: 120, where: "status in ('Delivered', 'Failed')" },
];
