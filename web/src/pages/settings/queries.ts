import { api, unwrap } from "../../api/client";

export const SETTINGS = ["settings"] as const;

export const settingsQuery = {
  queryKey: SETTINGS,
  queryFn: async () => (await unwrap(api.GET("/api/v1/settings"))).data,
};

/** The exchange rates in force today (GET /api/v1/exchange-rates): the tenant's own and the reference ones. */
export const RATES = ["exchange-rates"] as const;

export const exchangeRatesQuery = {
  queryKey: RATES,
  queryFn: async () => (await unwrap(api.GET("/api/v1/exchange-rates"))).data,
};

/** The tenant's settings, as GET /api/v1/settings answers them. */
export type Settings = Awaited<ReturnType<typeof settingsQuery.queryFn>>;
