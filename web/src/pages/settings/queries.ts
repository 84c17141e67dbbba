import { api, unwrap } from "../../api/client";

export const SETTINGS = ["settings"] as const;

export const settingsQuery = {
  queryKey: SETTINGS,
  queryFn: async () => (await unwrap(api.GET("/api/v1/settings"))).data,
};
