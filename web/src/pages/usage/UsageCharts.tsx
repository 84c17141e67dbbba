import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link } from "@tanstack/react-router";
import { lazy, Suspense } from "react";
import { DataTable } from "../../components/DataTable";
import { Empty, ErrorState, Loading } from "../../components/states";
import { formatInteger } from "../../format";
import type { Bar } from "./BarsChart";
import { bucketLabel } from "./buckets";
import { timeseriesQuery, type UsageBucket, type UsageStats } from "./queries";

// The page reaches its route by id: its routes module imports it, never the other way.
const usageRoute = getRouteApi("/app/usage");

// ECharts is the largest dependency: it loads beside the figures, not before them.
const BarsChart = lazy(() => import("./BarsChart"));

const CALLS_COLOR = "#1d4ed8";
const LIMITED_COLOR = "#b91c1c";
const INTERVALS = [
  { value: "hour", label: "By hour" },
  { value: "day", label: "By day" },
] as const;

/** Calls per hour or per day (every bucket of the window, zeros included), with the same figures as a table. */
export function CallsOverTime() {
  const search = usageRoute.useSearch();
  const interval = search.interval ?? "hour";
  const series = useQuery(timeseriesQuery(interval, search.key));
  const buckets = series.data?.buckets ?? [];
  const total = buckets.reduce((sum, b) => sum + b.calls, 0);
  const unit = interval === "hour" ? "hour" : "day";
  // Days are the account's (the answer names its zone); the labels read that zone's clock.
  const zone = series.data?.timeZone ?? "UTC";
  const label = (b: UsageBucket | undefined) => (b ? bucketLabel(b.start, interval, zone) : "");

  return (
    <section className="panel" aria-labelledby="over-time-title">
      <div className="page-head">
        <h2 id="over-time-title">Calls by {unit}</h2>
        <ul className="presets" aria-label="Bucket size">
          {INTERVALS.map((option) => {
            const active = option.value === interval;
            return (
              <li key={option.value}>
                <Link
                  to="/usage"
                  search={(prev) => ({ ...prev, interval: option.value === "day" ? "day" : undefined })}
                  className={active ? "chip active" : "chip"}
                  // The router marks the chosen one (aria-current); an absent parameter must match an absent
                  // one, or "all" would match every choice. The chip class is ours.
                  activeOptions={{ explicitUndefined: true }}
                  activeProps={{}}
                >
                  {option.label}
                </Link>
              </li>
            );
          })}
        </ul>
      </div>
      {series.isPending ? (
        <Loading label="Loading the calls over time…" />
      ) : series.isError ? (
        <ErrorState error={series.error} onRetry={() => void series.refetch()} />
      ) : total === 0 ? (
        <Empty>No calls in the last 72 hours.</Empty>
      ) : (
        <>
          <Suspense fallback={<Loading label="Loading the chart…" />}>
            <BarsChart
              bars={buckets.map((b) => ({ label: label(b), value: b.calls }))}
              seriesName="Calls"
              color={CALLS_COLOR}
              description={`Chart of calls by ${unit} (${zone}) from ${label(buckets[0])} to ${label(buckets.at(-1))}: ${formatInteger(total)} calls in all.`}
            />
          </Suspense>
          <details className="usage-figures">
            <summary>The figures by {unit}</summary>
            <DataTable<UsageBucket>
              caption={`Calls by ${unit}, ${zone}`}
              rows={buckets.filter((b) => b.calls > 0)}
              rowKey={(b) => b.start}
              columns={[
                {
                  key: "start",
                  label: unit === "hour" ? `Hour (${zone})` : `Day (${zone})`,
                  cell: (b) => label(b),
                },
                {
                  key: "calls",
                  label: "Calls",
                  numeric: true,
                  cell: (b) => formatInteger(b.calls),
                  total: formatInteger(total),
                },
              ]}
              empty="No calls."
              totals
            />
          </details>
        </>
      )}
    </section>
  );
}

/** Answers by status class, the 429s apart from the other 4xx (their count is the API's rateLimited). */
export function CallsByStatus({ stats }: { stats: UsageStats }) {
  const classes = stats.byStatusClass;
  const bars: Bar[] = [
    { label: "2xx", value: classes["2xx"] },
    { label: "3xx", value: classes["3xx"] },
    { label: "4xx (not 429)", value: classes["4xx"] - stats.rateLimited },
    { label: "429", value: stats.rateLimited, color: LIMITED_COLOR },
    { label: "5xx", value: classes["5xx"] },
  ];
  return (
    <section className="panel" aria-labelledby="by-status-title">
      <h2 id="by-status-title">Calls by status</h2>
      {stats.totalCalls === 0 ? (
        <Empty>No calls in the last 72 hours.</Empty>
      ) : (
        <Suspense fallback={<Loading label="Loading the chart…" />}>
          <BarsChart
            bars={bars}
            seriesName="Calls"
            color={CALLS_COLOR}
            horizontal
            description={`Chart of calls by status: ${bars.map((b) => `${b.label} ${formatInteger(b.value)}`).join(", ")}.`}
          />
        </Suspense>
      )}
    </section>
  );
}
