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

/** A bucket's start as its axis label: the day, or the day and the hour (UTC). */
export function bucketLabel(start: string, interval: "hour" | "day"): string {
  return interval === "day" ? start.slice(0, 10) : `${start.slice(5, 10)} ${start.slice(11, 16)}`;
}
