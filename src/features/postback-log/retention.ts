import type { RetentionRule } from "../../platform/retention.js";

/** Lines of the postback log are kept this many days (docs/conversions.md, "The postback log"). */
export const POSTBACK_LOG_RETENTION_DAYS = 30;

export const POSTBACK_LOG_RETENTION: RetentionRule[] = [
  { table: "postback_log", column: "at", days: POSTBACK_LOG_RETENTION_DAYS },
];
