import { type QueryClient, useQueries, useQuery } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import type { paths } from "../../api/schema";
import type { DeliverySearch, WebhookListSearch } from "./search";
import { ATTEMPTS_PAGE_SIZE, changesSoon, deliveryQuery, PAGE_SIZE } from "./search";

const BASE = "/api/v1/conversions/outgoing/webhooks";
type Json<P extends keyof paths, M extends "get" | "post" | "patch", S extends number> = paths[P][M] extends {
  responses: { [K in S]: { content: { "application/json": infer J } } };
}
  ? J
  : never;

export type Webhook = Json<`${typeof BASE}/settings/{id}`, "get", 200>["data"];
export type NewWebhook = paths[`${typeof BASE}/settings`]["post"]["requestBody"]["content"]["application/json"];
export type WebhookPatch = paths[`${typeof BASE}/settings/{id}`]["patch"]["requestBody"]["content"]["application/json"];
export type DeliveryEvent = Json<`${typeof BASE}/events/{id}`, "get", 200>["data"];
export type ConversionType = NonNullable<NewWebhook["conversionTypes"]>[number];
export type AttributionSource = NonNullable<NewWebhook["attributionSources"]>[number];

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
};

export function useWebhookList(search: WebhookListSearch) {
  return useQuery({
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
}

/** Every webhook of the tenant (at most 5 affiliate-level plus 5 per source), for names and filters. */
export function useAllWebhooks() {
  return useQuery({
    queryKey: keys.allWebhooks,
    queryFn: async () => (await unwrap(api.GET(`${BASE}/settings`, { params: { query: { limit: 500 } } }))).data,
  });
}

export function useWebhook(id: string) {
  return useQuery({
    queryKey: keys.webhook(id),
    queryFn: async () => (await unwrap(api.GET(`${BASE}/settings/{id}`, { params: { path: { id } } }))).data,
  });
}

export function usePlaceholders() {
  return useQuery({
    queryKey: ["webhook-placeholders"],
    queryFn: async () => (await unwrap(api.GET(`${BASE}/placeholders`))).data,
    staleTime: Number.POSITIVE_INFINITY,
  });
}

/**
 * The traffic sources the tenant's webhooks fire for, read one by one (the form finds others by
 * typing): their names for the webhook list.
 */
export function useTrafficSources() {
  const webhooks = useAllWebhooks();
  const ids = [
    ...new Set((webhooks.data ?? []).flatMap((w) => (w.trafficSourceId === null ? [] : [w.trafficSourceId]))),
  ];
  return useQueries({
    queries: ids.map((id) => ({
      queryKey: ["traffic-sources", "one", id],
      queryFn: async () => (await unwrap(api.GET("/api/v1/traffic-sources/{id}", { params: { path: { id } } }))).data,
      retry: false,
    })),
    combine: (results) => ({ data: results.flatMap((result) => (result.data ? [result.data] : [])) }),
  });
}

/** Whether Click postbacks are on for the tenant (its entitlements, GET /settings). */
export function useTenantSettings() {
  return useQuery({
    queryKey: ["tenant-settings"],
    queryFn: async () => (await unwrap(api.GET("/api/v1/settings"))).data,
  });
}

/** The API's verdict on a URL template; empty text is not asked about. */
export function useUrlCheck(url: string) {
  return useQuery({
    queryKey: ["webhook-url-check", url],
    queryFn: async () => (await unwrap(api.POST(`${BASE}/settings/validate`, { body: { url } }))).data,
    enabled: url.trim() !== "",
    staleTime: 60_000,
  });
}

const refreshWhileWaiting = (waiting: boolean) => (waiting ? 2_000 : false);

export function useEvents(search: DeliverySearch) {
  return useQuery({
    queryKey: keys.eventList(search),
    queryFn: () => unwrap(api.GET(`${BASE}/events`, { params: { query: deliveryQuery(search) } })),
    // The worker sends waiting events on its own: the log follows until none on the page is waiting.
    refetchInterval: (query) =>
      refreshWhileWaiting(
        query.state.data?.data.some((e) => e.status === "Queued" || e.status === "Retrying") ?? false,
      ),
  });
}

export function useEvent(id: string) {
  return useQuery({
    queryKey: keys.event(id),
    queryFn: async () => (await unwrap(api.GET(`${BASE}/events/{id}`, { params: { path: { id } } }))).data,
    refetchInterval: (query) =>
      refreshWhileWaiting(query.state.data ? changesSoon(query.state.data, Date.now()) : false),
  });
}

export function useAttempts(id: string, offset: number, eventAttempts: number | undefined) {
  return useQuery({
    // The event's attempt count is part of the key: a new attempt fetches the list again.
    queryKey: [...keys.attempts(id, offset), eventAttempts],
    queryFn: () =>
      unwrap(
        api.GET(`${BASE}/events/{id}/attempts`, {
          params: { path: { id }, query: { offset, limit: ATTEMPTS_PAGE_SIZE } },
        }),
      ),
    enabled: eventAttempts !== undefined,
  });
}

export const webhooksApi = {
  create: async (body: NewWebhook) => (await unwrap(api.POST(`${BASE}/settings`, { body }))).data,
  update: async (id: string, body: WebhookPatch) =>
    (await unwrap(api.PATCH(`${BASE}/settings/{id}`, { params: { path: { id } }, body }))).data,
  remove: async (id: string) => (await unwrap(api.DELETE(`${BASE}/settings/{id}`, { params: { path: { id } } }))).data,
  simulate: async (id: string) =>
    (await unwrap(api.POST(`${BASE}/settings/{id}/simulate`, { params: { path: { id } }, body: {} }))).data,
  resend: async (id: string) =>
    (await unwrap(api.POST(`${BASE}/events/{id}/resend`, { params: { path: { id } } }))).data,
  removeEvent: async (id: string) =>
    (await unwrap(api.DELETE(`${BASE}/events/{id}`, { params: { path: { id } } }))).data,
  cancelRange: async (body: RangeBody) => unwrap(api.POST(`${BASE}/events/cancel`, { body })),
  deleteRange: async (body: RangeBody) => unwrap(api.POST(`${BASE}/events/delete`, { body })),
};

export interface RangeBody {
  webhookId?: string;
  dateFrom: string;
  dateTo: string;
}

/** After a webhook changed: its lists, its page, and the delivery log (names, new simulated events). */
export async function webhookChanged(client: QueryClient): Promise<void> {
  await Promise.all([
    client.invalidateQueries({ queryKey: keys.webhooks }),
    client.invalidateQueries({ queryKey: keys.events }),
  ]);
}

export const eventsChanged = (client: QueryClient) => client.invalidateQueries({ queryKey: keys.events });
