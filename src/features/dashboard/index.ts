export { DASHBOARD_CSP, dashboardRoutes } from "./routes.js";
