export { type CreatedApiToken, createApiToken, type NewApiToken } from "./service.js";
