import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { loadReportZone } from "../../account-time-zone";
import { appRoute } from "../../shell";
import { reportRowsQuery, reportTotalsQuery } from "./queries";
import { readSearch, validateReportSearch } from "./report-state";

// Each page's code loads when it is first visited, so the first route stays small. The report's
// whole state is in the address, checked on read, so a link to it can be shared.
const reportsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/reports",
  validateSearch: validateReportSearch,
  loaderDeps: ({ search }) => search,
  // Starts the table (and its totals row) in the zone the page will ask in, and returns: the page
  // shows its loading and error states itself.
  loader: ({ context: { queryClient }, deps }) => {
    const { state } = readSearch(deps);
    void loadReportZone(queryClient, state.timeZone).then((zone) => {
      const at = { now: Date.now(), zone };
      return Promise.all([
        queryClient.prefetchQuery(reportRowsQuery(state, at)),
        state.fields.length > 0 ? queryClient.prefetchQuery(reportTotalsQuery(state, at)) : undefined,
      ]);
    });
  },
  component: lazyRouteComponent(() => import("./ReportsPage"), "ReportsPage"),
});

export const reportsRoutes = [reportsRoute] as const;
