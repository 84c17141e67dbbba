import { api, unwrap } from "../../api/client";

/** The usage endpoints over the rolling 72 hours, narrowed to one key when `key` is given. */
export async function fetchStats(key: string | undefined) {
  const query = key ? { apiTokenId: key } : {};
  return (await unwrap(api.GET("/api/v1/traffic-controls/api-usage/stats", { params: { query } }))).data;
}

export async function fetchTimeseries(interval: "hour" | "day", key: string | undefined) {
  const query = { interval, ...(key ? { apiTokenId: key } : {}) };
  return (await unwrap(api.GET("/api/v1/traffic-controls/api-usage/timeseries", { params: { query } }))).data;
}

export async function fetchBreakdown(groupBy: "endpoint" | "apiKey", key: string | undefined) {
  const query = { groupBy, ...(key ? { apiTokenId: key } : {}) };
  return (await unwrap(api.GET("/api/v1/traffic-controls/api-usage/breakdown", { params: { query } }))).data;
}

export type UsageStats = Awaited<ReturnType<typeof fetchStats>>;
export type UsageRow = Awaited<ReturnType<typeof fetchBreakdown>>[number];
export type UsageBucket = Awaited<ReturnType<typeof fetchTimeseries>>["buckets"][number];
