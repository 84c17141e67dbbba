import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { type Column, DataTable, sortRows } from "../../components/DataTable";
import { ErrorState, Loading } from "../../components/states";
import { formatInteger, formatPercent } from "../../format";
import { breakdownQuery, type UsageRow } from "./queries";
import { parseSort, writeSort } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const usageRoute = getRouteApi("/app/usage");

const share = (calls: number, total: number) => (total > 0 ? formatPercent(calls / total) : "–");
const cellValue = (row: UsageRow, key: string) => (key === "calls" ? row.calls : row.label);

function columns(total: number, first: Column<UsageRow>): Column<UsageRow>[] {
  return [
    first,
    {
      key: "calls",
      label: "Calls",
      numeric: true,
      sortable: true,
      cell: (row) => formatInteger(row.calls),
      total: formatInteger(total),
    },
    { key: "share", label: "Share", numeric: true, cell: (row) => share(row.calls, total) },
  ];
}

/** Calls by endpoint and by key, busiest first unless the address orders them otherwise. */
export function UsageBreakdowns() {
  const search = usageRoute.useSearch();
  const navigate = useNavigate({ from: "/usage" });
  const endpoints = useQuery(breakdownQuery("endpoint", search.key));
  const keys = useQuery(breakdownQuery("apiKey", search.key));
  const endpointSort = parseSort(search.endpointSort);
  const keySort = parseSort(search.keySort);
  const sum = (rows: UsageRow[]) => rows.reduce((total, row) => total + row.calls, 0);

  return (
    <div className="usage-tables">
      <section className="panel" aria-labelledby="by-endpoint-title">
        <h2 id="by-endpoint-title">By endpoint</h2>
        {endpoints.isPending ? (
          <Loading label="Loading the calls by endpoint…" />
        ) : endpoints.isError ? (
          <ErrorState error={endpoints.error} onRetry={() => void endpoints.refetch()} />
        ) : (
          <DataTable
            caption="Calls by endpoint over the rolling 72 hours"
            rows={sortRows(endpoints.data, endpointSort, cellValue)}
            rowKey={(row) => row.key}
            columns={columns(sum(endpoints.data), {
              key: "label",
              label: "Endpoint",
              sortable: true,
              cell: (row) => <code>{row.label}</code>,
            })}
            {...(endpointSort ? { sort: endpointSort } : {})}
            onSort={(sort) => void navigate({ search: (prev) => ({ ...prev, endpointSort: writeSort(sort) }) })}
            empty="No calls in the last 72 hours."
            totals
          />
        )}
      </section>
      <section className="panel" aria-labelledby="by-key-title">
        <h2 id="by-key-title">By API key</h2>
        {keys.isPending ? (
          <Loading label="Loading the calls by key…" />
        ) : keys.isError ? (
          <ErrorState error={keys.error} onRetry={() => void keys.refetch()} />
        ) : (
          <DataTable
            caption="Calls by API key over the rolling 72 hours"
            rows={sortRows(keys.data, keySort, cellValue)}
            rowKey={(row) => row.key}
            columns={columns(sum(keys.data), {
              key: "label",
              label: "Key",
              sortable: true,
              cell: (row) => (
                <>
                  <Link
                    to="/usage"
                    search={(prev) => ({ ...prev, key: row.key })}
                    title="Show only the calls made with this key"
                  >
                    {row.label}
                  </Link>
                  <span className="usage-key-id">{row.key}</span>
                </>
              ),
            })}
            {...(keySort ? { sort: keySort } : {})}
            onSort={(sort) => void navigate({ search: (prev) => ({ ...prev, keySort: writeSort(sort) }) })}
            empty="No calls in the last 72 hours."
            totals
          />
        )}
      </section>
    </div>
  );
}
