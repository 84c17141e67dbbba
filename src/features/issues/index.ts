export { issueRoutes } from "./routes.js";
export { closeIssue, raiseIssue } from "./service.js";
