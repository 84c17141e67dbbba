export { activeVersionRoute } from "./active-version.js";
export { defaultChecks, type HealthCheck } from "./checks.js";
export { buildReport, CachedReport } from "./report.js";
export { healthRoutes } from "./routes.js";
