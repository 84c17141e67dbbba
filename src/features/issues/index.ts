export { issueRoutes } from "./routes.js";
export { closeIssue, raiseIssue, subjectsWithOpenIssue } from "./service.js";
