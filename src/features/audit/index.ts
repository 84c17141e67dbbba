export { type Actor, actorOf, recordAudit } from "./service.js";
