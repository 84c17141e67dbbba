import { api, unwrap } from "../../api/client";

/** Every query of this area starts with it. Each narrows to one key's calls when `key` is given. */
const USAGE = ["usage"] as const;

/** The usage endpoints' figures over the rolling 72 hours: the page's main query. */
export const statsQuery = (key: string | undefined) => ({
  queryKey: [...USAGE, "stats", key],
  queryFn: async () =>
    (
      await unwrap(
        api.GET("/api/v1/traffic-controls/api-usage/stats", { params: { query: key ? { apiTokenId: key } : {} } }),
      )
    ).data,
});

export const timeseriesQuery = (interval: "hour" | "day", key: string | undefined) => ({
  queryKey: [...USAGE, "timeseries", interval, key],
  queryFn: async () => {
    const query = { interval, ...(key ? { apiTokenId: key } : {}) };
    return (await unwrap(api.GET("/api/v1/traffic-controls/api-usage/timeseries", { params: { query } }))).data;
  },
});

export const breakdownQuery = (groupBy: "endpoint" | "apiKey", key: string | undefined) => ({
  queryKey: [...USAGE, "breakdown", groupBy, key],
  queryFn: async () => {
    const query = { groupBy, ...(key ? { apiTokenId: key } : {}) };
    return (await unwrap(api.GET("/api/v1/traffic-controls/api-usage/breakdown", { params: { query } }))).data;
  },
});

/** Webhook deliveries this month against the plan's allowance (GET /api/v1/usage/allowance). */
export const allowanceQuery = {
  queryKey: [...USAGE, "allowance"],
  queryFn: async () => (await unwrap(api.GET("/api/v1/usage/allowance"))).data,
};

export type UsageStats = Awaited<ReturnType<ReturnType<typeof statsQuery>["queryFn"]>>;
export type UsageRow = Awaited<ReturnType<ReturnType<typeof breakdownQuery>["queryFn"]>>[number];
export type UsageBucket = Awaited<ReturnType<ReturnType<typeof timeseriesQuery>["queryFn"]>>["buckets"][number];
