export type { ClickBufferOptions } from "./click-buffer.js";
export { conversionRoutes } from "./conversion-routes.js";
export type { ConversionHook, ConversionRecord } from "./conversion-service.js";
export { COMMISSION_TYPES, CONVERSION_TYPES, type ConversionType } from "./conversion-types.js";
export { linkGeneratorRoutes } from "./link-generator.js";
export { pageViewsFor } from "./page-views.js";
export { trackingPublicRoutes } from "./public-routes.js";
export { TRACKING_RETENTION } from "./retention.js";
export { Tracking } from "./tracking.js";
