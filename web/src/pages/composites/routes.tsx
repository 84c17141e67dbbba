import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { parseCompositeSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const compositesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/accounts",
  validateSearch: parseCompositeSearch,
  component: lazyRouteComponent(() => import("./CompositesPage"), "CompositesPage"),
});

/** One account's links, with the same period, comparison, sort, search and paging in the URL. */
const accountLinksRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/accounts/$accountId",
  validateSearch: parseCompositeSearch,
  component: lazyRouteComponent(() => import("./AccountLinksPage"), "AccountLinksPage"),
});

export const compositesRoutes = [compositesRoute, accountLinksRoute] as const;
