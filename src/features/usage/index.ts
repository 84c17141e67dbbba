export { meterRequest, UsageMeter, usageMetering } from "./meter.js";
export { usageRoutes } from "./routes.js";
export { usagePurgeJob } from "./service.js";
