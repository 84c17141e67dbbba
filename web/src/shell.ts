import type { QueryClient } from "@tanstack/react-query";
import { createRootRouteWithContext, createRoute, Outlet, redirect } from "@tanstack/react-router";
import { Layout } from "./pages/Layout";
import { NotFound } from "./pages/NotFound";
import { session } from "./session";

/** What every route's loader is given: the query cache it starts its page's queries in. */
export interface RouterContext {
  queryClient: QueryClient;
}

/** The root of every route. */
export const rootRoute = createRootRouteWithContext<RouterContext>()({
  component: Outlet,
  notFoundComponent: NotFound,
});

/**
 * Every page but the sign-in: without a session, to the sign-in page (and back afterwards). The
 * router runs this before any child route's loader, so a signed-out visit asks the API for nothing.
 */
export const appRoute = createRoute({
  getParentRoute: () => rootRoute,
  id: "app",
  // A new tab first asks the open tabs for their session (session.ts), then decides.
  beforeLoad: async ({ location }) => {
    await session.ready();
    if (!session.token()) throw redirect({ to: "/sign-in", search: { next: location.href } });
  },
  component: Layout,
});
