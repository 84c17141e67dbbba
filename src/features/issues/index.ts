export { closeIssue, raiseIssue, subjectsWithOpenIssue } from "./service.js";
