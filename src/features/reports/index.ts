export { findReport, REPORTS, type ReportDefinition, type ReportResult } from "./registry.js";
export { reportRoutes } from "./routes.js";
