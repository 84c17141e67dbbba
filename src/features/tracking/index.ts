export type { ClickBufferOptions, ClickHook } from "./click-buffer.js";
export type { Click } from "./click-writer.js";
export { writeClicks } from "./click-writer.js";
export { type ConversionInput, readConversion } from "./conversion-input.js";
export type { ConversionRecord } from "./conversion-record.js";
export { type ConversionHook, recordConversions } from "./conversion-service.js";
export {
  CONVERSION_STATUSES,
  COUNTED_STATUSES,
  type ConversionStatus,
  isCounted,
  parseStatusList,
} from "./conversion-status.js";
export {
  ATTRIBUTION_SOURCES,
  attributionSourceOf,
  COMMISSION_TYPES,
  CONVERSION_TYPES,
  type ConversionType,
  isConversionType,
} from "./conversion-types.js";
export { type DeliveryListing, sqlListing } from "./deliveries.js";
export { pageViewsFor } from "./page-views.js";
export { RAW_EVENT_RETENTION_DAYS, TRACKING_RETENTION } from "./retention.js";
// The rollups' layout, which the reports read.
export {
  COARSE_ROLLUPS,
  DAILY_DIMENSIONS,
  DAY_ROWS,
  EPOCH_DAYS,
  FACT_COLUMNS,
  REPORT_MEASURES,
  ROLLUP_SPANS,
  SUB_ID_VALUES_PER_DAY,
  TAIL_DAYS,
} from "./rollups.js";
export type { StatusChange, StatusChangeHook } from "./status-changes.js";
export { Tracking } from "./tracking.js";
