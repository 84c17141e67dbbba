import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { loadAccountTimeZone } from "../../account-time-zone";
import { appRoute } from "../../shell";
import { clickQuery, clicksQuery, postbackLogQueryOptions } from "./queries";
import { parseClickLogSearch, parsePostbackLogSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small. Pages reach
// their route through getRouteApi, so this file imports them and they never import it.
const clicksRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/clicks",
  validateSearch: parseClickLogSearch,
  loaderDeps: ({ search }) => search,
  // Starts the list in the zone the page will ask in, and returns: the page shows its loading and
  // error states itself.
  loader: ({ context: { queryClient }, deps }) =>
    void loadAccountTimeZone(queryClient).then((zone) => queryClient.prefetchQuery(clicksQuery(deps, zone))),
  component: lazyRouteComponent(() => import("./ClicksPage"), "ClicksPage"),
});

const clickRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/clicks/$clickId",
  loader: ({ context: { queryClient }, params }) => void queryClient.prefetchQuery(clickQuery(params.clickId)),
  component: lazyRouteComponent(() => import("./ClickPage"), "ClickPage"),
});

const postbackLogRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/postback-log",
  validateSearch: parsePostbackLogSearch,
  loaderDeps: ({ search }) => search,
  loader: ({ context: { queryClient }, deps }) =>
    void loadAccountTimeZone(queryClient).then((zone) =>
      queryClient.prefetchQuery(postbackLogQueryOptions(deps, zone)),
    ),
  component: lazyRouteComponent(() => import("./PostbackLogPage"), "PostbackLogPage"),
});

export const logsRoutes = [clicksRoute, clickRoute, postbackLogRoute] as const;
