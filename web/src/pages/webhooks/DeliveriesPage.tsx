import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import type { FormEvent } from "react";
import type { Column } from "../../components/DataTable";
import { Field } from "../../components/Field";
import { HistoryList } from "../../components/HistoryList";
import { formatDateTime, formatInteger } from "../../format";
import { useCan } from "../../permissions";
import { withOffset } from "../../search-params";
import { conversionTypeLabel } from "../../vocabulary";
import { StatusBadge as ConversionStatusBadge } from "../conversions/StatusBadge";
import type { DeliveryEvent } from "./api";
import { StatusBadge, WebhookTabs } from "./parts";
import { allWebhooksQuery, eventsQuery, refreshWhileWaiting } from "./queries";
import { RangeActions } from "./RangeActions";
import { EVENT_STATUSES, parseDeliverySearch } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const deliveriesRoute = getRouteApi("/app/webhooks/deliveries");

const when = (iso: string | null) => (iso ? formatDateTime(iso) : "—");

/** The delivery log (GET events): filters and paging live in the address, so a view can be shared. */
export function DeliveriesPage() {
  const search = deliveriesRoute.useSearch();
  const navigate = useNavigate({ from: "/webhooks/deliveries" });
  const can = useCan();
  const events = useQuery({
    ...eventsQuery(search),
    // The worker sends waiting events on its own: the log follows until none on the page is waiting.
    refetchInterval: (query) =>
      refreshWhileWaiting(
        query.state.data?.data.some((e) => e.status === "Queued" || e.status === "Retrying") ?? false,
      ),
  });
  const webhooks = useQuery(allWebhooksQuery);
  const nameOf = (id: string) => webhooks.data?.find((w) => w.id === id)?.name ?? id;
  const filtered = Object.keys(search).some((key) => key !== "offset");

  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = Object.fromEntries(new FormData(event.currentTarget));
    void navigate({ search: parseDeliverySearch(form) });
  };

  const columns: Column<DeliveryEvent>[] = [
    {
      key: "id",
      label: "Event",
      cell: (e) => (
        <>
          <Link to="/webhooks/deliveries/$eventId" params={{ eventId: e.id }} className="event-id">
            {e.id}
          </Link>
          <span className="muted small cell-line">{formatDateTime(e.createdAt)}</span>
        </>
      ),
    },
    { key: "webhook", label: "Webhook", cell: (e) => nameOf(e.webhookId) },
    {
      key: "conversion",
      label: "Conversion",
      cell: (e) => (
        <>
          {e.conversionType && conversionTypeLabel(e.conversionType)}{" "}
          {e.conversionStatus && <ConversionStatusBadge status={e.conversionStatus} />}{" "}
          {e.simulated && <span className="badge status-info">simulated</span>}
          <span className="muted small cell-line id-text">{e.conversionId ?? e.clickId ?? ""}</span>
        </>
      ),
    },
    { key: "status", label: "Status", cell: (e) => <StatusBadge status={e.status} /> },
    {
      key: "attempts",
      label: "Attempts",
      cell: (e) => (
        <>
          <span className="cell-line">{formatInteger(e.attempts)}</span>
          <span className="cell-line muted small">Last: {when(e.lastAttemptAt)}</span>
          <span className="cell-line muted small">Next: {when(e.nextAttemptAt)}</span>
        </>
      ),
    },
  ];

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Delivery log</h1>
          <p className="muted">Each postback the webhooks sent or will send, newest first. Dates are UTC days.</p>
        </div>
      </div>
      <WebhookTabs current="deliveries" />
      {/* Keyed by the address, so Back and a shared link show their own filters. */}
      <form key={JSON.stringify(search)} className="toolbar filters" onSubmit={onFilter} aria-label="Filter deliveries">
        <Field label="Status">
          {(props) => (
            <select {...props} name="status" defaultValue={search.status ?? ""}>
              <option value="">Any</option>
              {EVENT_STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Webhook">
          {(props) => (
            <select {...props} name="webhookId" defaultValue={search.webhookId ?? ""}>
              <option value="">Any</option>
              {(webhooks.data ?? []).map((w) => (
                <option key={w.id} value={w.id}>
                  {w.name}
                </option>
              ))}
              {search.webhookId && webhooks.data && !webhooks.data.some((w) => w.id === search.webhookId) && (
                <option value={search.webhookId}>{search.webhookId}</option>
              )}
            </select>
          )}
        </Field>
        <Field label="Conversion id">
          {(props) => <input {...props} name="conversionId" defaultValue={search.conversionId ?? ""} />}
        </Field>
        <Field label="Click id">
          {(props) => <input {...props} name="clickId" defaultValue={search.clickId ?? ""} />}
        </Field>
        <Field label="From">
          {(props) => <input {...props} type="date" name="dateFrom" defaultValue={search.dateFrom ?? ""} />}
        </Field>
        <Field label="To">
          {(props) => <input {...props} type="date" name="dateTo" defaultValue={search.dateTo ?? ""} />}
        </Field>
        <button type="submit" className="button primary">
          Apply
        </button>
        {filtered && (
          <Link to="/webhooks/deliveries" search={{}} className="button secondary">
            Clear filters
          </Link>
        )}
      </form>
      {can("webhooks.update") &&
        (can("traffic-sources.delete") ? (
          <RangeActions search={search} webhooks={webhooks.data ?? []} />
        ) : (
          <p className="muted small">
            Cancelling or deleting the events of a date range also needs the traffic-sources.delete permission.
          </p>
        ))}
      <HistoryList
        list={events}
        rowsOf={(d) => ({ rows: d.data, page: d.pagination })}
        caption="Delivery events"
        columns={columns}
        rowKey={(e) => e.id}
        empty={filtered ? "No delivery matches these filters." : "No deliveries yet: they appear with conversions."}
        loading="Loading deliveries…"
        pagerLabel="Deliveries"
        onOffset={(offset) => void navigate({ search: withOffset(search, offset) })}
      />
    </>
  );
}
