export { apiTokenExpiryJob } from "./expiry-job.js";
export { apiTokenRoutes } from "./routes.js";
export { createApiToken, type NewApiToken } from "./service.js";
