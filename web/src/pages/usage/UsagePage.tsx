import { useQuery } from "@tanstack/react-query";
import { getRouteApi, useNavigate } from "@tanstack/react-router";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { breakdownQuery, statsQuery } from "./queries";
import { UsageBreakdowns } from "./UsageBreakdowns";
import { CallsByStatus, CallsOverTime } from "./UsageCharts";
import { UsageFigures } from "./UsageFigures";
import { WebhookAllowance } from "./WebhookAllowance";
import "./usage.css";

// The page reaches its route by id: its routes module imports it, never the other way.
const usageRoute = getRouteApi("/app/usage");

/** Calls made with the tenant's API keys over the rolling 72 hours (GET /traffic-controls/api-usage/*). */
export function UsagePage() {
  const search = usageRoute.useSearch();
  const stats = useQuery(statsQuery(search.key));

  // Without the stats (no usage.read, the service unreachable), the other parts would say the same.
  if (stats.isError) {
    return (
      <>
        <h1>API usage</h1>
        <ErrorState error={stats.error} onRetry={() => void stats.refetch()} />
      </>
    );
  }
  return (
    <>
      <div className="page-head">
        <h1>API usage</h1>
        <KeyFilter />
      </div>
      <p className="muted">
        Calls made with the tenant's API keys over the rolling 72 hours
        {stats.data ? `, ${formatDateTime(stats.data.from)} to ${formatDateTime(stats.data.to)}` : ""}. Calls refused
        with 429 (over the rate limit) are counted apart.
      </p>
      <section aria-labelledby="usage-figures-title">
        <h2 id="usage-figures-title" className="visually-hidden">
          Totals
        </h2>
        <UsageFigures stats={stats.data} />
      </section>
      <div className="usage-panels">
        <CallsOverTime />
        {stats.isPending ? <Loading label="Loading the calls by status…" /> : <CallsByStatus stats={stats.data} />}
      </div>
      <UsageBreakdowns />
      <WebhookAllowance />
    </>
  );
}

/** Narrows every figure to one key's calls; the keys offered are those with calls in the window. */
function KeyFilter() {
  const search = usageRoute.useSearch();
  const navigate = useNavigate({ from: "/usage" });
  const keys = useQuery(breakdownQuery("apiKey", undefined));
  const options = keys.data ?? [];
  const known = search.key === undefined || options.some((k) => k.key === search.key);
  return (
    <div className="field inline">
      <label htmlFor="usage-key">API key</label>
      <select
        id="usage-key"
        value={search.key ?? ""}
        onChange={(event) =>
          void navigate({
            search: (prev) => ({ ...prev, key: event.target.value === "" ? undefined : event.target.value }),
          })
        }
      >
        <option value="">All keys</option>
        {options.map((k) => (
          <option key={k.key} value={k.key}>
            {k.label}
          </option>
        ))}
        {!known && <option value={search.key}>{search.key}</option>}
      </select>
    </div>
  );
}
