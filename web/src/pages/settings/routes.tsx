import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";

// Each page's code loads when it is first visited, so the first route stays small.
const settingsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/settings",
  component: lazyRouteComponent(() => import("./SettingsPage"), "SettingsPage"),
});

export const settingsRoutes = [settingsRoute] as const;
