import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { prefetchIfAllowed } from "../../prefetch";
import { appRoute } from "../../shell";
import { connectionQuery, serviceQuery } from "./queries";

// Not `/mcp`: that is the MCP endpoint, which the service answers before the dashboard.
// Each page's code loads when it is first visited, so the first route stays small.
const mcpRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/mcp-setup",
  // Starts the page's queries and returns: the page shows its loading and error states itself.
  loader: ({ context: { queryClient } }) => {
    void queryClient.prefetchQuery(connectionQuery);
    prefetchIfAllowed(queryClient, "account.admin", () => queryClient.prefetchQuery(serviceQuery));
  },
  component: lazyRouteComponent(() => import("./McpPage"), "McpPage"),
});

export const mcpRoutes = [mcpRoute] as const;
