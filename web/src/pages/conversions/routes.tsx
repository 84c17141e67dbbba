import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { parseConversionSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small.
const conversionsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/conversions",
  validateSearch: parseConversionSearch,
  component: lazyRouteComponent(() => import("./ConversionsPage"), "ConversionsPage"),
});

/** One conversion, its page views and the postbacks it caused. */
const conversionRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/conversions/$conversionId",
  component: lazyRouteComponent(() => import("./ConversionPage"), "ConversionPage"),
});

export const conversionsRoutes = [conversionsRoute, conversionRoute] as const;
