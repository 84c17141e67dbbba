import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { loadReportZone } from "../../account-time-zone";
import { appRoute } from "../../shell";
import { accountIdOf, accountQuery, accountsMetricsQuery } from "./queries";
import { parseCompositeSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const compositesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/accounts",
  validateSearch: parseCompositeSearch,
  loaderDeps: ({ search }) => search,
  // Starts the figures in the zone the page will ask in, and returns: the page shows its loading
  // and error states itself.
  loader: ({ context: { queryClient }, deps }) =>
    void loadReportZone(queryClient, deps.tz).then((zone) =>
      queryClient.prefetchQuery(accountsMetricsQuery(deps, zone, Date.now())),
    ),
  component: lazyRouteComponent(() => import("./CompositesPage"), "CompositesPage"),
});

/** One account's links, with the same period, comparison, sort, search and paging in the URL. */
const accountLinksRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/accounts/$accountId",
  validateSearch: parseCompositeSearch,
  // The links are asked for once the account is known (an unknown one is a 404 and no figures).
  loader: ({ context: { queryClient }, params }) => {
    const id = accountIdOf(params.accountId);
    if (id !== null) void queryClient.prefetchQuery(accountQuery(id));
  },
  component: lazyRouteComponent(() => import("./AccountLinksPage"), "AccountLinksPage"),
});

export const compositesRoutes = [compositesRoute, accountLinksRoute] as const;
