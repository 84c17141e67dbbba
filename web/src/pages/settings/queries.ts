import { api, unwrap } from "../../api/client";

export const SETTINGS = ["settings"] as const;

export const settingsQuery = {
  queryKey: SETTINGS,
  queryFn: async () => (await unwrap(api.GET("/api/v1/settings"))).data,
};

/** The tenant's settings, as GET /api/v1/settings answers them. */
export type Settings = Awaited<ReturnType<typeof settingsQuery.queryFn>>;
