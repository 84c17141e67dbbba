export { listenForCatalogChanges } from "./broadcast.js";
export { catalogItemOf, createItem, RESOURCE_BY_TABLE } from "./service.js";
