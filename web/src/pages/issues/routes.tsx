import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { issueQuery, issuesQuery } from "./queries";
import { validateIssuesSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const issuesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/issues",
  validateSearch: validateIssuesSearch,
  loaderDeps: ({ search: { status, kind, offset } }) => ({ status, kind, offset }),
  // Starts the page's query and returns: the page shows its loading and error states itself.
  loader: ({ context: { queryClient }, deps }) => void queryClient.prefetchQuery(issuesQuery(deps)),
  component: lazyRouteComponent(() => import("./IssuesPage"), "IssuesPage"),
});

const issueRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/issues/$issueId",
  loader: ({ context: { queryClient }, params }) => void queryClient.prefetchQuery(issueQuery(params.issueId)),
  component: lazyRouteComponent(() => import("./IssuePage"), "IssuePage"),
});

export const issuesRoutes = [issuesRoute, issueRoute] as const;
