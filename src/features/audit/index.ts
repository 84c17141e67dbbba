export { auditRoutes } from "./routes.js";
export { type Actor, actorOf, getAudit, listAudit, recordAudit } from "./service.js";
