import { QueryClient } from "@tanstack/react-query";
import { createRoute, createRouter } from "@tanstack/react-router";
import { loadReportZone } from "./account-time-zone";
import { ApiFailure } from "./api/client";
import { isDay, previousPeriod } from "./dates";
import { apiKeysRoutes } from "./pages/api-keys/routes";
import { catalogRoutes } from "./pages/catalog/routes";
import { compositesRoutes } from "./pages/composites/routes";
import { conversionsRoutes } from "./pages/conversions/routes";
import { openIssuesQuery } from "./pages/issues/queries";
import { issuesRoutes } from "./pages/issues/routes";
import { logsRoutes } from "./pages/logs/routes";
import { mcpRoutes } from "./pages/mcp/routes";
import { notificationsRoutes } from "./pages/notifications/routes";
import { Overview } from "./pages/Overview";
import { dailyQuery, overviewRange, totalsQuery } from "./pages/overview/queries";
import { reportsRoutes } from "./pages/reports/routes";
import { SignIn } from "./pages/SignIn";
import { settingsRoutes } from "./pages/settings/routes";
import { trafficSourceRoutes } from "./pages/traffic-sources/routes";
import { usageRoutes } from "./pages/usage/routes";
import { webhooksRoutes } from "./pages/webhooks/routes";
import { prefetchIfAllowed } from "./prefetch";
import { currencyParam, timeZoneParam } from "./search-params";
import { appRoute, rootRoute } from "./shell";

export const queryClient = new QueryClient({
  defaultOptions: {
    queries: {
      staleTime: 30_000,
      // A refusal (4xx) will not change on retry; a network error or a 5xx may.
      retry: (count, error) => count < 2 && !(error instanceof ApiFailure && error.status >= 400 && error.status < 500),
      refetchOnWindowFocus: false,
    },
  },
});

export interface SignInSearch {
  reason?: "expired" | "signed-out";
  next?: string;
}

/** Only a path of this app may follow the sign-in: never another origin. */
const isLocalPath = (value: unknown): value is string =>
  typeof value === "string" && value.startsWith("/") && !value.startsWith("//") && !value.startsWith("/\\");

const signInRoute = createRoute({
  getParentRoute: () => rootRoute,
  path: "/sign-in",
  validateSearch: (search: Record<string, unknown>): SignInSearch => ({
    ...(search.reason === "expired" || search.reason === "signed-out" ? { reason: search.reason } : {}),
    ...(isLocalPath(search.next) ? { next: search.next } : {}),
  }),
  component: SignIn,
});

export interface OverviewSearch {
  from?: string;
  to?: string;
  /** The currency amounts are shown in; absent: the tenant's reporting currency. */
  currency?: string;
  /** The zone the days are read in; absent: the account's `timeZone` setting. */
  tz?: string;
}

const overviewRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/",
  validateSearch: (search: Record<string, unknown>): OverviewSearch => {
    const currency = currencyParam(search.currency);
    const tz = timeZoneParam(search.tz);
    return {
      ...(isDay(search.from) && isDay(search.to) && search.from <= search.to
        ? { from: search.from, to: search.to }
        : {}),
      ...(currency ? { currency } : {}),
      ...(tz ? { tz } : {}),
    };
  },
  loaderDeps: ({ search }) => search,
  // Starts the figures in the zone the page will ask in (and the open issues for an admin), and
  // returns: the page shows its loading and error states itself.
  loader: ({ context: { queryClient }, deps }) => {
    prefetchIfAllowed(queryClient, "account.admin", () => queryClient.prefetchQuery(openIssuesQuery));
    void loadReportZone(queryClient, deps.tz).then((zone) => {
      const range = overviewRange(deps, zone, Date.now());
      return Promise.all([
        queryClient.prefetchQuery(totalsQuery(range, zone, deps.currency)),
        queryClient.prefetchQuery(totalsQuery(previousPeriod(range), zone, deps.currency)),
        queryClient.prefetchQuery(dailyQuery(range, zone)),
      ]);
    });
  },
  component: Overview,
});

export const router = createRouter({
  routeTree: rootRoute.addChildren([
    signInRoute,
    appRoute.addChildren([
      overviewRoute,
      ...reportsRoutes,
      ...compositesRoutes,
      ...catalogRoutes,
      ...trafficSourceRoutes,
      ...conversionsRoutes,
      ...logsRoutes,
      ...webhooksRoutes,
      ...notificationsRoutes,
      ...apiKeysRoutes,
      ...mcpRoutes,
      ...usageRoutes,
      ...issuesRoutes,
      ...settingsRoutes,
    ]),
  ]),
  // Loaders start their page's queries in this cache (docs/dashboard.md, "Data").
  context: { queryClient },
  defaultPreload: "intent",
  // Hovering a link runs its loaders every time: the query cache, not the router, decides what is fresh.
  defaultPreloadStaleTime: 0,
  scrollRestoration: true,
});

declare module "@tanstack/react-router" {
  interface Register {
    router: typeof router;
  }
}
