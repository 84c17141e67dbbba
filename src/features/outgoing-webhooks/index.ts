export { webhookSettingsRoutes } from "./routes.js";
