import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { statsQuery } from "./queries";
import { validateUsageSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const usageRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/usage",
  validateSearch: validateUsageSearch,
  loaderDeps: ({ search }) => ({ key: search.key }),
  // Starts the page's main query and returns: the page shows its loading and error states itself.
  loader: ({ context: { queryClient }, deps }) => void queryClient.prefetchQuery(statsQuery(deps.key)),
  component: lazyRouteComponent(() => import("./UsagePage"), "UsagePage"),
});

export const usageRoutes = [usageRoute] as const;
