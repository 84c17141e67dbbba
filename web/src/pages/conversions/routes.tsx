import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { loadAccountTimeZone } from "../../account-time-zone";
import { appRoute } from "../../shell";
import { conversionRecordQuery, conversionsQuery } from "./queries";
import { parseConversionSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const conversionsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/conversions",
  validateSearch: parseConversionSearch,
  loaderDeps: ({ search }) => search,
  // Starts the list in the zone the page will ask in, and returns: the page shows its loading and
  // error states itself.
  loader: ({ context: { queryClient }, deps }) =>
    void loadAccountTimeZone(queryClient).then((zone) => queryClient.prefetchQuery(conversionsQuery(deps, zone))),
  component: lazyRouteComponent(() => import("./ConversionsPage"), "ConversionsPage"),
});

/** One conversion, its page views and the postbacks it caused. */
const conversionRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/conversions/$conversionId",
  loader: ({ context: { queryClient }, params }) =>
    void queryClient.prefetchQuery(conversionRecordQuery(params.conversionId)),
  component: lazyRouteComponent(() => import("./ConversionPage"), "ConversionPage"),
});

export const conversionsRoutes = [conversionsRoute, conversionRoute] as const;
