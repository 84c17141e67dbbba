import { useQuery } from "@tanstack/react-query";
import { getRouteApi, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import type { Column } from "../../components/DataTable";
import { Field } from "../../components/Field";
import { HistoryList } from "../../components/HistoryList";
import { formatDateTime, formatInteger } from "../../format";
import { withOffset } from "../../search-params";
import { DELIVERY_STATUSES, EVENT_TYPES, isDeliveryStatus, isEventType } from "./events";
import { deliveriesQuery } from "./queries";

// The page reaches its route by id: its routes module imports it, never the other way.
const notificationWebhookRoute = getRouteApi("/app/notifications/$webhookId");

interface Attempt {
  id: string;
  attempt: number;
  at: string;
  status: "succeeded" | "failed";
  responseStatus: number | null;
  responseBody: string | null;
  durationMs: number;
  errorType: string | null;
  error: string | null;
}

interface DeliveryRow {
  id: string;
  type: string;
  status: string;
  payload: unknown;
  attemptCount: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  attempts: Attempt[];
}

const STATUS_BADGE: Record<string, string> = {
  Delivered: "ok",
  Queued: "queued",
  Retrying: "warning",
  Failed: "error",
};

function AttemptLine({ attempt }: { attempt: Attempt }) {
  const answer = attempt.responseStatus === null ? "no answer" : `HTTP ${attempt.responseStatus}`;
  return (
    <li>
      #{attempt.attempt} {formatDateTime(attempt.at)}: {attempt.status}, {answer}, {formatInteger(attempt.durationMs)}{" "}
      ms
      {attempt.errorType && (
        <>
          {" "}
          (<code>{attempt.errorType}</code>
          {attempt.error ? `: ${attempt.error}` : ""})
        </>
      )}
      {attempt.responseBody && <pre className="response-body">{attempt.responseBody}</pre>}
    </li>
  );
}

const columnsFor = (open: string | null, toggle: (id: string) => void): Column<DeliveryRow>[] => [
  {
    key: "message",
    label: "Message",
    cell: (row) => (
      <>
        {formatDateTime(row.createdAt)}
        <span className="muted small block">
          <code>{row.id}</code>
        </span>
      </>
    ),
  },
  { key: "type", label: "Type", cell: (row) => <code>{row.type}</code> },
  {
    key: "status",
    label: "Status",
    cell: (row) => <span className={`badge ${STATUS_BADGE[row.status] ?? ""}`}>{row.status}</span>,
  },
  {
    key: "attempts",
    label: "Attempts",
    cell: (row) => (
      <>
        {formatInteger(row.attemptCount)}
        {row.nextAttemptAt && <span className="muted small block">next {formatDateTime(row.nextAttemptAt)}</span>}
      </>
    ),
  },
  {
    key: "details",
    label: "Details",
    cell: (row) => (
      <button
        type="button"
        className="button secondary"
        aria-expanded={open === row.id}
        aria-controls={open === row.id ? "delivery-details" : undefined}
        onClick={() => toggle(row.id)}
      >
        {open === row.id ? "Hide" : "Show"}
        <span className="visually-hidden"> details of {row.id}</span>
      </button>
    ),
  },
];

/** One message's attempts and payload, across the panel's width. */
function DeliveryDetails({ row }: { row: DeliveryRow }) {
  return (
    <section id="delivery-details" className="delivery-details" aria-labelledby="delivery-details-title">
      <h3 id="delivery-details-title">
        Message <code>{row.id}</code>
      </h3>
      {row.attempts.length === 0 ? (
        <p className="muted">No attempt yet.</p>
      ) : (
        <ol className="attempts">
          {row.attempts.map((attempt) => (
            <AttemptLine key={attempt.id} attempt={attempt} />
          ))}
        </ol>
      )}
      <h4>Payload</h4>
      <pre>{JSON.stringify(row.payload, null, 2)}</pre>
    </section>
  );
}

/** The messages sent to one webhook (GET .../deliveries, newest first), filtered and paged in the URL. */
export function Deliveries({ webhookId }: { webhookId: string }) {
  const { offset = 0, status, type } = notificationWebhookRoute.useSearch();
  const navigate = useNavigate({ from: "/notifications/$webhookId" });
  const deliveries = useQuery(deliveriesQuery(webhookId, { offset, status, type }));
  const [open, setOpen] = useState<string | null>(null);
  const shown = deliveries.data?.items.find((row) => row.id === open);
  const filter = (next: { status?: string; type?: string }) =>
    void navigate({
      search: (prev) => {
        const chosenStatus = "status" in next ? next.status : prev.status;
        const chosenType = "type" in next ? next.type : prev.type;
        return {
          ...(isDeliveryStatus(chosenStatus) ? { status: chosenStatus } : {}),
          ...(isEventType(chosenType) ? { type: chosenType } : {}),
        };
      },
    });

  return (
    <section className="panel deliveries" aria-labelledby="deliveries-title">
      <h2 id="deliveries-title">Delivery history</h2>
      <div className="toolbar">
        <Field label="Status" inline>
          {(props) => (
            <select {...props} value={status ?? ""} onChange={(e) => filter({ status: e.target.value })}>
              <option value="">Any</option>
              {DELIVERY_STATUSES.map((s) => (
                <option key={s} value={s}>
                  {s}
                </option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Type" inline>
          {(props) => (
            <select {...props} value={type ?? ""} onChange={(e) => filter({ type: e.target.value })}>
              <option value="">Any</option>
              {EVENT_TYPES.map((e) => (
                <option key={e.type} value={e.type}>
                  {e.type}
                </option>
              ))}
            </select>
          )}
        </Field>
      </div>
      <HistoryList
        list={deliveries}
        rowsOf={(d) => ({ rows: d.items, page: d.page })}
        caption="Messages sent to this webhook, newest first"
        columns={columnsFor(open, (id) => setOpen(open === id ? null : id))}
        rowKey={(row) => row.id}
        empty={status || type ? "No message matches these filters." : "No message has been sent to this webhook yet."}
        loading="Loading the deliveries…"
        pagerLabel="Deliveries"
        onOffset={(next) => void navigate({ search: (prev) => withOffset(prev, next) })}
      >
        {shown && <DeliveryDetails row={shown} />}
      </HistoryList>
    </section>
  );
}
