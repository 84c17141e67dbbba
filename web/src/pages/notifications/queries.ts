import { api, unwrap } from "../../api/client";
import type { DeliveryStatus, EventType } from "./events";

/** One page of a list: as many as a person scans at once. */
export const PAGE_SIZE = 20;

/** Every query of this area starts with it, so a change refreshes them all. */
export const HOOKS = ["notification-webhooks"] as const;

export const webhooksQuery = (offset: number) => ({
  queryKey: [...HOOKS, "list", offset],
  queryFn: async () => {
    const answer = await unwrap(
      api.GET("/api/v1/notifications/webhooks", { params: { query: { offset, limit: PAGE_SIZE } } }),
    );
    return { items: answer.data, page: answer.pagination };
  },
});

export const webhookQuery = (id: string) => ({
  queryKey: [...HOOKS, "one", id],
  queryFn: async () =>
    (await unwrap(api.GET("/api/v1/notifications/webhooks/{id}", { params: { path: { id } } }))).data,
});

export interface DeliveryFilter {
  offset: number;
  status?: DeliveryStatus | undefined;
  type?: EventType | undefined;
}

export const deliveriesQuery = (id: string, { offset, status, type }: DeliveryFilter) => ({
  queryKey: [...HOOKS, "deliveries", id, offset, status ?? "", type ?? ""],
  queryFn: async () => {
    const answer = await unwrap(
      api.GET("/api/v1/notifications/webhooks/{id}/deliveries", {
        params: {
          path: { id },
          query: { offset, limit: PAGE_SIZE, ...(status ? { status } : {}), ...(type ? { type } : {}) },
        },
      }),
    );
    return { items: answer.data, page: answer.pagination };
  },
});
