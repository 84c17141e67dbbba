import type { RetentionRule } from "../../platform/retention.js";
import { WEBHOOK_HISTORY_DAYS } from "../outgoing-webhooks/index.js";

/**
 * Postback history is kept as long as outgoing webhook history, finished postbacks only (one
 * still waiting is never purged); attempts go with their postback (on delete cascade).
 */
export const SOURCE_POSTBACK_RETENTION: RetentionRule[] = [
  {
    table: "source_postbacks",
    column: "created_at",
    days: WEBHOOK_HISTORY_DAYS,
    where: "status in ('Delivered', 'Failed', 'Cancelled')",
  },
];
