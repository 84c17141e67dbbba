import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";

// Each page's code loads when it is first visited, so the first route stays small.
export const mcpRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/mcp",
  component: lazyRouteComponent(() => import("./McpPage"), "McpPage"),
});

export const mcpRoutes = [mcpRoute] as const;
