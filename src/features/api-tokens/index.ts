export { apiTokenExpiryJob } from "./expiry-job.js";
export { createApiToken, type NewApiToken } from "./service.js";
