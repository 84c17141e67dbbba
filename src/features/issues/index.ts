export { closeIssue, closeIssuesOfSubject, raiseIssue, subjectsWithOpenIssue } from "./service.js";
