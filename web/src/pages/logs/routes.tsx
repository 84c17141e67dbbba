import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { parseClickLogSearch, parsePostbackLogSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small. Pages reach
// their route through getRouteApi, so this file imports them and they never import it.
const clicksRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/clicks",
  validateSearch: parseClickLogSearch,
  component: lazyRouteComponent(() => import("./ClicksPage"), "ClicksPage"),
});

const clickRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/clicks/$clickId",
  component: lazyRouteComponent(() => import("./ClickPage"), "ClickPage"),
});

const postbackLogRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/postback-log",
  validateSearch: parsePostbackLogSearch,
  component: lazyRouteComponent(() => import("./PostbackLogPage"), "PostbackLogPage"),
});

export const logsRoutes = [clicksRoute, clickRoute, postbackLogRoute] as const;
