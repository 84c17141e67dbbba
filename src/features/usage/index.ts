export { meterNotRecordedClick, meterRequest, UsageMeter, usageMetering } from "./meter.js";
export { usagePurgeJob } from "./service.js";
