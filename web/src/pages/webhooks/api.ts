import type { QueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import type { paths } from "../../api/schema";
import { BASE, keys } from "./queries";

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
