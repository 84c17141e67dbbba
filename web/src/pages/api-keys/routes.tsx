import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { prefetchIfAllowed } from "../../prefetch";
import { positiveIntParam } from "../../search-params";
import { appRoute } from "../../shell";
import { keysQuery } from "./queries";

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
  loaderDeps: ({ search }) => ({ offset: search.offset ?? 0 }),
  // Starts the list for an account admin, as the page asks only then, and returns: the page shows
  // its loading and error states itself.
  loader: ({ context: { queryClient }, deps }) =>
    prefetchIfAllowed(queryClient, "account.admin", () => queryClient.prefetchQuery(keysQuery(deps.offset))),
  component: lazyRouteComponent(() => import("./ApiKeysPage"), "ApiKeysPage"),
});

export const apiKeysRoutes = [apiKeysRoute] as const;
