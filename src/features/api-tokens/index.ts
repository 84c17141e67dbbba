export { apiTokenRoutes } from "./routes.js";
export { type CreatedApiToken, createApiToken, type NewApiToken } from "./service.js";
