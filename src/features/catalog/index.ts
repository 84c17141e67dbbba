export { listenForCatalogChanges } from "./broadcast.js";
export { catalogRoutes } from "./routes.js";
export { catalogItemOf, createItem, RESOURCE_BY_TABLE } from "./service.js";
