export { recordedLines, refusedLines } from "./lines.js";
export { POSTBACK_LOG_RETENTION } from "./retention.js";
export { postbackLogRoutes } from "./routes.js";
export { writePostbackLog } from "./writer.js";
