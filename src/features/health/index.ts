export { defaultChecks, type HealthCheck } from "./checks.js";
export { buildReport, CachedReport } from "./report.js";
