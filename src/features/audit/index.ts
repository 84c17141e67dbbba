export { auditRoutes } from "./routes.js";
export { type Actor, actorOf, recordAudit } from "./service.js";
