import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { prefetchIfAllowed } from "../../prefetch";
import { positiveIntParam } from "../../search-params";
import { appRoute } from "../../shell";
import { type DeliveryStatus, type EventType, isDeliveryStatus, isEventType } from "./events";
import { webhookQuery, webhooksQuery } from "./queries";

export interface NotificationsSearch {
  offset?: number;
}

export interface WebhookSearch {
  offset?: number;
  status?: DeliveryStatus;
  type?: EventType;
}

// Each page's code loads when it is first visited, so the first route stays small.
const notificationsRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/notifications",
  validateSearch: (search: Record<string, unknown>): NotificationsSearch => {
    const offset = positiveIntParam(search.offset);
    return offset === undefined ? {} : { offset };
  },
  loaderDeps: ({ search }) => ({ offset: search.offset ?? 0 }),
  // Starts the list for an account admin, as the page asks only then, and returns: the page shows
  // its loading and error states itself.
  loader: ({ context: { queryClient }, deps }) =>
    prefetchIfAllowed(queryClient, "account.admin", () => queryClient.prefetchQuery(webhooksQuery(deps.offset))),
  component: lazyRouteComponent(() => import("./NotificationsPage"), "NotificationsPage"),
});

const notificationWebhookRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/notifications/$webhookId",
  validateSearch: (search: Record<string, unknown>): WebhookSearch => {
    const offset = positiveIntParam(search.offset);
    return {
      ...(offset === undefined ? {} : { offset }),
      ...(isDeliveryStatus(search.status) ? { status: search.status } : {}),
      ...(isEventType(search.type) ? { type: search.type } : {}),
    };
  },
  loader: ({ context: { queryClient }, params }) => void queryClient.prefetchQuery(webhookQuery(params.webhookId)),
  component: lazyRouteComponent(() => import("./WebhookPage"), "WebhookPage"),
});

export const notificationsRoutes = [notificationsRoute, notificationWebhookRoute] as const;
