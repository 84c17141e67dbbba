import { api, unwrap } from "../../api/client";
import type { DeliverySearch, WebhookListSearch } from "./search";
import { ATTEMPTS_PAGE_SIZE, deliveryQuery, PAGE_SIZE } from "./search";

export const BASE = "/api/v1/conversions/outgoing/webhooks";

/** Query keys, so a mutation invalidates exactly what it changed. */
export const keys = {
  webhooks: ["webhooks"] as const,
  webhookList: (search: WebhookListSearch) => ["webhooks", "list", search] as const,
  allWebhooks: ["webhooks", "all"] as const,
  webhook: (id: string) => ["webhooks", "one", id] as const,
  events: ["webhook-events"] as const,
  eventList: (search: DeliverySearch) => ["webhook-events", "list", search] as const,
  event: (id: string) => ["webhook-events", "one", id] as const,
  attempts: (id: string, offset: number) => ["webhook-events", "attempts", id, offset] as const,
  /** The deliveries one conversion caused (its page's postbacks). */
  conversionEvents: (conversionId: string, offset: number) =>
    ["webhook-events", "conversion", conversionId, offset] as const,
};

export const webhookListQuery = (search: WebhookListSearch) => ({
  queryKey: keys.webhookList(search),
  queryFn: () =>
    unwrap(
      api.GET(`${BASE}/settings`, {
        params: {
          query: {
            ...(search.status ? { status: search.status } : {}),
            ...(search.search ? { search: search.search } : {}),
            offset: search.offset ?? 0,
            limit: PAGE_SIZE,
          },
        },
      }),
    ),
});

/** Every webhook of the tenant (at most 5 affiliate-level plus 5 per source), for names and filters. */
export const allWebhooksQuery = {
  queryKey: keys.allWebhooks,
  queryFn: async () => (await unwrap(api.GET(`${BASE}/settings`, { params: { query: { limit: 500 } } }))).data,
};

export const webhookQuery = (id: string) => ({
  queryKey: keys.webhook(id),
  queryFn: async () => (await unwrap(api.GET(`${BASE}/settings/{id}`, { params: { path: { id } } }))).data,
});

export const placeholdersQuery = {
  queryKey: ["webhook-placeholders"],
  queryFn: async () => (await unwrap(api.GET(`${BASE}/placeholders`))).data,
  staleTime: Number.POSITIVE_INFINITY,
};

/** A traffic source a webhook fires for, read for its name in the webhook list. */
export const webhookSourceQuery = (id: number) => ({
  queryKey: ["traffic-sources", "one", id],
  queryFn: async () => (await unwrap(api.GET("/api/v1/traffic-sources/{id}", { params: { path: { id } } }))).data,
  retry: false,
});

/** The API's verdict on a URL template; the form asks only about text that is not empty. */
export const urlCheckQuery = (url: string) => ({
  queryKey: ["webhook-url-check", url],
  queryFn: async () => (await unwrap(api.POST(`${BASE}/settings/validate`, { body: { url } }))).data,
  staleTime: 60_000,
});

export const eventsQuery = (search: DeliverySearch) => ({
  queryKey: keys.eventList(search),
  queryFn: () => unwrap(api.GET(`${BASE}/events`, { params: { query: deliveryQuery(search) } })),
});

export const eventQuery = (id: string) => ({
  queryKey: keys.event(id),
  queryFn: async () => (await unwrap(api.GET(`${BASE}/events/{id}`, { params: { path: { id } } }))).data,
});

/** The event's attempt count is part of the key: a new attempt fetches the list again. */
export const attemptsQuery = (id: string, offset: number, eventAttempts: number | undefined) => ({
  queryKey: [...keys.attempts(id, offset), eventAttempts],
  queryFn: () =>
    unwrap(
      api.GET(`${BASE}/events/{id}/attempts`, {
        params: { path: { id }, query: { offset, limit: ATTEMPTS_PAGE_SIZE } },
      }),
    ),
});

/** The outgoing-webhook deliveries one conversion caused (the conversion's page). */
export const conversionEventsQuery = (conversionId: string, offset: number, limit: number) => ({
  queryKey: keys.conversionEvents(conversionId, offset),
  queryFn: () => unwrap(api.GET(`${BASE}/events`, { params: { query: { conversionId, offset, limit } } })),
});

/** The worker sends waiting events on its own: a list or an event follows while one waits. */
export const refreshWhileWaiting = (waiting: boolean) => (waiting ? 2_000 : false);
