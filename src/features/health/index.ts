export { activeVersionRoute } from "./active-version.js";
export { type CheckDeps, defaultChecks, type HealthCheck, SEARCH_INDEXES } from "./checks.js";
export { buildReport, CachedReport, type HealthReport } from "./report.js";
export { healthRoutes } from "./routes.js";
