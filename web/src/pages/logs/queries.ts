import { api, unwrap } from "../../api/client";
import { type ClickLogSearch, clickLogQuery, type PostbackLogSearch, postbackLogQuery } from "./search";

/** Every query of this area starts with it. */
const LOGS = ["logs"] as const;

export const clicksQuery = (search: ClickLogSearch, zone: string | undefined) => {
  const query = clickLogQuery(search, zone);
  return {
    queryKey: [...LOGS, "clicks", query],
    queryFn: () => unwrap(api.GET("/api/v1/clicks", { params: { query } })),
  };
};

export const clickQuery = (clickId: string) => ({
  queryKey: [...LOGS, "click", clickId],
  queryFn: async () => (await unwrap(api.GET("/api/v1/clicks/{clickId}", { params: { path: { clickId } } }))).data,
});

export const postbackLogQueryOptions = (search: PostbackLogSearch, zone: string | undefined) => {
  const query = postbackLogQuery(search, zone);
  return {
    queryKey: [...LOGS, "postback-log", query],
    queryFn: () => unwrap(api.GET("/api/v1/postback-log", { params: { query } })),
  };
};
