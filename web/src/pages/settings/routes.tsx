import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { prefetchIfAllowed } from "../../prefetch";
import { appRoute } from "../../shell";
import { exchangeRatesQuery, settingsQuery } from "./queries";

// Each page's code loads when it is first visited, so the first route stays small.
const settingsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/settings",
  // Starts what the page asks for, as it asks only for what the person may read, and returns:
  // the page shows its loading and error states itself.
  loader: ({ context: { queryClient } }) => {
    prefetchIfAllowed(queryClient, "account.admin", () => queryClient.prefetchQuery(settingsQuery));
    prefetchIfAllowed(queryClient, ["account.admin", "reports.read"], () =>
      queryClient.prefetchQuery(exchangeRatesQuery),
    );
  },
  component: lazyRouteComponent(() => import("./SettingsPage"), "SettingsPage"),
});

export const settingsRoutes = [settingsRoute] as const;
