export type { ClickBufferOptions, ClickHook } from "./click-buffer.js";
export type { Click } from "./click-writer.js";
export { writeClicks } from "./click-writer.js";
export { type ConversionInput, readConversion } from "./conversion-input.js";
export { type ConversionHook, type ConversionRecord, recordConversions } from "./conversion-service.js";
export {
  ATTRIBUTION_SOURCES,
  attributionSourceOf,
  COMMISSION_TYPES,
  CONVERSION_TYPES,
  type ConversionType,
  isConversionType,
} from "./conversion-types.js";
export { TRACKING_RETENTION } from "./retention.js";
export { Tracking } from "./tracking.js";
