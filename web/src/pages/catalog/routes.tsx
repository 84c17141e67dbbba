import { createRoute, lazyRouteComponent, notFound } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { isEntityKey } from "./entities";
import { catalogId, parseGeneratorSearch, parseListSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const catalogRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/catalog",
  component: lazyRouteComponent(() => import("./CatalogLayout"), "CatalogLayout"),
});

const catalogHomeRoute = createRoute({
  getParentRoute: () => catalogRoute,
  path: "/",
  component: lazyRouteComponent(() => import("./CatalogHome"), "CatalogHome"),
});

/** A static segment ranks before `$entity`, so this is never read as a list's name. */
const linkGeneratorRoute = createRoute({
  getParentRoute: () => catalogRoute,
  path: "link-generator",
  validateSearch: parseGeneratorSearch,
  component: lazyRouteComponent(() => import("./LinkGeneratorPage"), "LinkGeneratorPage"),
});

/** One list (brands, programs, ...), searched, filtered and paged by its URL. */
const entityListRoute = createRoute({
  getParentRoute: () => catalogRoute,
  path: "$entity",
  beforeLoad: ({ params }) => {
    if (!isEntityKey(params.entity)) throw notFound();
  },
  validateSearch: parseListSearch,
  component: lazyRouteComponent(() => import("./EntityListPage"), "EntityListPage"),
});

/** A new row (`new`) or one row to edit; the list's URL state rides along, to go back to it. */
const entityFormRoute = createRoute({
  getParentRoute: () => catalogRoute,
  path: "$entity/$id",
  beforeLoad: ({ params }) => {
    if (!isEntityKey(params.entity) || (params.id !== "new" && catalogId(params.id) === undefined)) throw notFound();
  },
  validateSearch: parseListSearch,
  component: lazyRouteComponent(() => import("./EntityFormPage"), "EntityFormPage"),
});

export const catalogRoutes = [
  catalogRoute.addChildren([catalogHomeRoute, linkGeneratorRoute, entityListRoute, entityFormRoute]),
] as const;
