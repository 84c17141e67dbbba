import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { positiveIntParam } from "../../search-params";
import { appRoute } from "../../shell";

export interface ApiKeysSearch {
  offset?: number;
}

// Each page's code loads when it is first visited, so the first route stays small.
export const apiKeysRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/api-keys",
  validateSearch: (search: Record<string, unknown>): ApiKeysSearch => {
    const offset = positiveIntParam(search.offset);
    return offset === undefined ? {} : { offset };
  },
  component: lazyRouteComponent(() => import("./ApiKeysPage"), "ApiKeysPage"),
});

export const apiKeysRoutes = [apiKeysRoute] as const;
