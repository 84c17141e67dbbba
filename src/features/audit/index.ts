export { auditRoutes } from "./routes.js";
export { type Actor, recordAudit } from "./service.js";
