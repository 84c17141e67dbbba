import type { RetentionRule } from "../../platform/retention.js";
import { WEBHOOK_HISTORY_DAYS } from "../outgoing-webhooks/index.js";

/**
 * Upload history is kept 120 days, as webhook delivery history is (docs/google-ads.md). An upload
 * still Retrying is never purged (its clicks are inside their 90 days anyway); its items go with
 * it (foreign key, on delete cascade). Queued items are taken into an upload within a round; one
 * withdrawn before its upload (its conversion rejected or reversed) stays in the queue's list
 * as long, then goes: by then its click is past the 90 days and it could never be sent.
 */
export const GOOGLE_ADS_RETENTION: RetentionRule[] = [
  { table: "google_ads_uploads", column: "created_at", days: WEBHOOK_HISTORY_DAYS, where: "status <> 'Retrying'" },
  {
    table: "google_ads_items",
    column: "created_at",
    days: WEBHOOK_HISTORY_DAYS,
    where: "upload_id is null and outcome = 'withdrawn'",
  },
];
