export { adminKeyGuard, adminRoutes } from "./routes.js";
