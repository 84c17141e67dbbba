import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { validateUsageSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const usageRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/usage",
  validateSearch: validateUsageSearch,
  component: lazyRouteComponent(() => import("./UsagePage"), "UsagePage"),
});

export const usageRoutes = [usageRoute] as const;
