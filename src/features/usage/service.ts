import type { Db, Queryable } from "../../platform/db/index.js";
import type { Job } from "../../platform/jobs.js";
import { NOT_RECORDED_CLICKS } from "./meter.js";

export const WINDOW_MS = 72 * 3600 * 1000;

export interface UsageScope {
  tenantId: string;
  apiTokenId?: string | undefined;
  now: Date;
}

// A row holds the calls of one minute and is stamped with the minute's start: it is in the window
// while any part of that minute is, so a call made late in the window's first minute counts.
const WINDOW = "tenant_id = $1 and at > $2::timestamptz - interval '1 minute' and at <= $3";
// Calls made with the tenant's keys; the rows of clicks not recorded have no key (NOT_RECORDED_CLICKS).
const WHERE = `${WINDOW} and ($4::text is null or token_id = $4) and token_id <> '${NOT_RECORDED_CLICKS}'`;

function params(scope: UsageScope): unknown[] {
  return [scope.tenantId, new Date(scope.now.getTime() - WINDOW_MS), scope.now, scope.apiTokenId ?? null];
}

export async function usageStats(db: Queryable, scope: UsageScope) {
  const [row] = await db.query<{
    total: number;
    limited: number;
    ips: number;
    s2: number;
    s3: number;
    s4: number;
    s5: number;
    not_recorded: number;
  }>(
    `select coalesce(sum(calls), 0)::int as total,
            coalesce(sum(calls) filter (where status = 429), 0)::int as limited,
            count(distinct ip)::int as ips,
            coalesce(sum(calls) filter (where status between 200 and 299), 0)::int as s2,
            coalesce(sum(calls) filter (where status between 300 and 399), 0)::int as s3,
            coalesce(sum(calls) filter (where status between 400 and 499), 0)::int as s4,
            coalesce(sum(calls) filter (where status >= 500), 0)::int as s5,
            (select coalesce(sum(calls), 0)::int from api_usage
              where ${WINDOW} and $4::text is null and token_id = '${NOT_RECORDED_CLICKS}') as not_recorded
       from api_usage where ${WHERE}`,
    params(scope),
  );
  return {
    from: new Date(scope.now.getTime() - WINDOW_MS).toISOString(),
    to: scope.now.toISOString(),
    totalCalls: row?.total ?? 0,
    rateLimited: row?.limited ?? 0,
    uniqueIps: row?.ips ?? 0,
    byStatusClass: { "2xx": row?.s2 ?? 0, "3xx": row?.s3 ?? 0, "4xx": row?.s4 ?? 0, "5xx": row?.s5 ?? 0 },
    clicksNotRecorded: row?.not_recorded ?? 0,
  };
}

/**
 * Calls per hour or per local day of `zone` over the window, every bucket present (zeros
 * included), oldest first. Hours are instants an hour apart (at :30 or :45 past in zones with such
 * offsets); days step in the zone's wall time, so a DST day is 23 or 25 hours long. A timestamptz
 * series would add '1 day' in the session's time zone instead.
 */
export async function usageTimeseries(db: Queryable, scope: UsageScope, interval: "hour" | "day", zone: string) {
  const series =
    interval === "hour"
      ? "generate_series(date_trunc('hour', $2::timestamptz, $6), date_trunc('hour', $3::timestamptz, $6), interval '1 hour') s"
      : `generate_series(date_trunc('day', $2::timestamptz, $6) at time zone $6,
                         date_trunc('day', $3::timestamptz, $6) at time zone $6, interval '1 day') w
         cross join lateral (select w at time zone $6 as s) z`;
  const rows = await db.query<{ start: Date; calls: number }>(
    `with buckets as (select s as start from ${series}),
     counts as (
       select date_trunc($5, at, $6) as start, sum(calls)::int as calls from api_usage where ${WHERE} group by 1
     )
     select b.start, coalesce(c.calls, 0)::int as calls from buckets b left join counts c using (start) order by b.start`,
    [...params(scope), interval, zone],
  );
  return {
    interval,
    timeZone: zone,
    buckets: rows.map((r) => ({ start: new Date(r.start).toISOString(), calls: r.calls })),
  };
}

/** Calls grouped by endpoint (method and route template) or by key, busiest first. */
export async function usageBreakdown(db: Queryable, scope: UsageScope, groupBy: "endpoint" | "apiKey") {
  if (groupBy === "endpoint") {
    const rows = await db.query<{ key: string; calls: number }>(
      `select method || ' ' || route as key, sum(calls)::int as calls from api_usage where ${WHERE}
        group by 1 order by calls desc, key`,
      params(scope),
    );
    return rows.map((r) => ({ key: r.key, label: r.key, calls: r.calls }));
  }
  const rows = await db.query<{ key: string; label: string | null; calls: number }>(
    `select u.token_id as key, k.name as label, u.calls from (
       select token_id, sum(calls)::int as calls from api_usage where ${WHERE} group by token_id
     ) u left join api_tokens k on k.id = u.token_id
     order by u.calls desc, u.token_id`,
    params(scope),
  );
  return rows.map((r) => ({ key: r.key, label: r.label ?? "(deleted key)", calls: r.calls }));
}

/** Hourly: usage older than the 72-hour window is deleted (a minute's row once all of it is). */
export function usagePurgeJob(db: Db): Job {
  return {
    name: "api-usage-purge",
    description: "Deletes API usage rows older than 72 hours",
    cron: "7 * * * *",
    async run(now) {
      const [row] = await db.query<{ n: number }>(
        `with gone as (delete from api_usage where at <= $1::timestamptz - interval '1 minute' returning calls)
         select coalesce(sum(calls), 0)::int as n from gone`,
        [new Date(now.getTime() - WINDOW_MS)],
      );
      return { deleted: row?.n ?? 0 };
    },
  };
}
