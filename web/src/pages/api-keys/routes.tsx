import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { positiveIntParam } from "../../search-params";
import { appRoute } from "../../shell";

export interface ApiKeysSearch {
  offset?: number;
  /** Scopes checked in the new key's form (comma list), as the MCP page links here. */
  scopes?: string;
}

// Each page's code loads when it is first visited, so the first route stays small.
const apiKeysRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/api-keys",
  validateSearch: (search: Record<string, unknown>): ApiKeysSearch => {
    const offset = positiveIntParam(search.offset);
    const scopes = typeof search.scopes === "string" && search.scopes.length <= 500 ? search.scopes : undefined;
    return { ...(offset === undefined ? {} : { offset }), ...(scopes === undefined ? {} : { scopes }) };
  },
  component: lazyRouteComponent(() => import("./ApiKeysPage"), "ApiKeysPage"),
});

export const apiKeysRoutes = [apiKeysRoute] as const;
