export { issueRoutes } from "./routes.js";
export { closeIssue, type IssueChange, raiseIssue } from "./service.js";
