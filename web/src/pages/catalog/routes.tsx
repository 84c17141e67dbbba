import { createRoute, lazyRouteComponent, notFound } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { ENTITIES, ENTITY_KEYS, isEntityKey } from "./entities";
import { countQuery, FIRST_ROW, generatedLinkQuery, listQueryOf, rowQuery, rowsQuery } from "./queries";
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
  // Each loader starts its page's queries and returns: the page shows its loading and error states itself.
  loader: ({ context: { queryClient } }) => {
    for (const entity of ENTITY_KEYS) void queryClient.prefetchQuery(countQuery(entity));
  },
  component: lazyRouteComponent(() => import("./CatalogHome"), "CatalogHome"),
});

/** A static segment ranks before `$entity`, so this is never read as a list's name. */
const linkGeneratorRoute = createRoute({
  getParentRoute: () => catalogRoute,
  path: "link-generator",
  validateSearch: parseGeneratorSearch,
  loaderDeps: ({ search }) => search,
  loader: ({ context: { queryClient }, deps }) => {
    void queryClient.prefetchQuery(rowsQuery("links", FIRST_ROW));
    void queryClient.prefetchQuery(rowsQuery("traffic-sources", FIRST_ROW));
    if (deps.link !== undefined && deps.source !== undefined) void queryClient.prefetchQuery(generatedLinkQuery(deps));
  },
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
  loaderDeps: ({ search }) => search,
  loader: ({ context: { queryClient }, params, deps }) => {
    if (isEntityKey(params.entity)) {
      const spec = ENTITIES[params.entity];
      void queryClient.prefetchQuery(rowsQuery(spec.key, listQueryOf(spec, deps)));
    }
  },
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
  loader: ({ context: { queryClient }, params }) => {
    const id = catalogId(params.id);
    if (isEntityKey(params.entity) && id !== undefined) void queryClient.prefetchQuery(rowQuery(params.entity, id));
  },
  component: lazyRouteComponent(() => import("./EntityFormPage"), "EntityFormPage"),
});

export const catalogRoutes = [
  catalogRoute.addChildren([catalogHomeRoute, linkGeneratorRoute, entityListRoute, entityFormRoute]),
] as const;
