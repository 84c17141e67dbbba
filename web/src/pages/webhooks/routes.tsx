import { createRoute, lazyRouteComponent } from "@tanstack/react-router";
import { appRoute } from "../../shell";
import { eventQuery, eventsQuery, webhookListQuery, webhookQuery } from "./queries";
import { parseAttemptSearch, parseDeliverySearch, parseWebhookListSearch } from "./search";

// Each page's code loads when it is first visited, so the first route stays small. Each loader
// starts its page's main query and returns: the page shows its loading and error states itself.
const webhooksRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/webhooks",
  validateSearch: parseWebhookListSearch,
  loaderDeps: ({ search }) => search,
  loader: ({ context: { queryClient }, deps }) => void queryClient.prefetchQuery(webhookListQuery(deps)),
  component: lazyRouteComponent(() => import("./WebhooksPage"), "WebhooksPage"),
});

const newWebhookRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/webhooks/new",
  component: lazyRouteComponent(() => import("./WebhookEditPage"), "NewWebhookPage"),
});

const editWebhookRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/webhooks/$webhookId",
  // Set once, by the page a new webhook was created on.
  validateSearch: (search: Record<string, unknown>): { created?: true } =>
    search.created === true || search.created === "true" ? { created: true } : {},
  loader: ({ context: { queryClient }, params }) => void queryClient.prefetchQuery(webhookQuery(params.webhookId)),
  component: lazyRouteComponent(() => import("./WebhookEditPage"), "EditWebhookPage"),
});

const deliveriesRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/webhooks/deliveries",
  validateSearch: parseDeliverySearch,
  loaderDeps: ({ search }) => search,
  loader: ({ context: { queryClient }, deps }) => void queryClient.prefetchQuery(eventsQuery(deps)),
  component: lazyRouteComponent(() => import("./DeliveriesPage"), "DeliveriesPage"),
});

/** Other pages (a conversion's) link here: keep the path. */
const deliveryRoute = createRoute({
  getParentRoute: () => appRoute,
  path: "/webhooks/deliveries/$eventId",
  validateSearch: parseAttemptSearch,
  loader: ({ context: { queryClient }, params }) => void queryClient.prefetchQuery(eventQuery(params.eventId)),
  component: lazyRouteComponent(() => import("./DeliveryPage"), "DeliveryPage"),
});

export const webhooksRoutes = [
  webhooksRoute,
  newWebhookRoute,
  editWebhookRoute,
  deliveriesRoute,
  deliveryRoute,
] as const;
