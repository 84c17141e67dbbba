import { createRootRoute, createRoute, Outlet, redirect } from "@tanstack/react-router";
import { Layout } from "./pages/Layout";
import { NotFound } from "./pages/NotFound";
import { session } from "./session";

/** The root of every route. */
export const rootRoute = createRootRoute({ component: Outlet, notFoundComponent: NotFound });

/** Every page but the sign-in: without a session, to the sign-in page (and back afterwards). */
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
