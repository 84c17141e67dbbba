import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";

export interface ApiKeysSearch {
  offset?: number;
}

/** Only a whole, positive offset pages; anything else is the first page. */
const offsetOf = (value: unknown) => {
  const n = typeof value === "string" ? Number(value) : value;
  return typeof n === "number" && Number.isInteger(n) && n > 0 ? n : undefined;
};

// Each page's code loads when it is first visited, so the first route stays small.
export const apiKeysRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/api-keys",
  validateSearch: (search: Record<string, unknown>): ApiKeysSearch => {
    const offset = offsetOf(search.offset);
    return offset === undefined ? {} : { offset };
  },
  component: lazyRouteComponent(() => import("./ApiKeysPage"), "ApiKeysPage"),
});

export const apiKeysRoutes = [apiKeysRoute] as const;
