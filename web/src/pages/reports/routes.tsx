import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { validateReportSearch } from "./report-state";

// Each page's code loads when it is first visited, so the first route stays small. The report's
// whole state is in the address, checked on read, so a link to it can be shared.
const reportsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/reports",
  validateSearch: validateReportSearch,
  component: lazyRouteComponent(() => import("./ReportsPage"), "ReportsPage"),
});

export const reportsRoutes = [reportsRoute] as const;
