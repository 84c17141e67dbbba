export { clickLogRoutes } from "./routes.js";
