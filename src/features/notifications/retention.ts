import type { RetentionRule } from "../../platform/retention.js";

/** Delivery history is kept 120 days, like the outgoing webhooks' event history; attempts go with their message. */
export const NOTIFICATION_RETENTION: RetentionRule[] = [
  { table: "notification_messages", column: "created_at", days: 120, where: "status in ('Delivered', 'Failed')" },
];
