import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { validateIssuesSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const issuesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/issues",
  validateSearch: validateIssuesSearch,
  component: lazyRouteComponent(() => import("./IssuesPage"), "IssuesPage"),
});

const issueRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/issues/$issueId",
  component: lazyRouteComponent(() => import("./IssuePage"), "IssuePage"),
});

export const issuesRoutes = [issuesRoute, issueRoute] as const;
