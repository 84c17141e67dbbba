import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";

// Not `/mcp`: that is the MCP endpoint, which the service answers before the dashboard.
// Each page's code loads when it is first visited, so the first route stays small.
const mcpRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/mcp-setup",
  component: lazyRouteComponent(() => import("./McpPage"), "McpPage"),
});

export const mcpRoutes = [mcpRoute] as const;
