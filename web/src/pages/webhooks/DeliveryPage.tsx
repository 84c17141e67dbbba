import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { type ReactNode, useState } from "react";
import { AttemptView } from "../../components/AttemptView";
import { ConfirmButton } from "../../components/ConfirmButton";
import { Facts } from "../../components/Facts";
import { Pager } from "../../components/Pager";
import { Empty, ErrorState, Loading, messageOf } from "../../components/states";
import { formatDateTime, formatInteger } from "../../format";
import { useCan } from "../../permissions";
import { withOffset } from "../../search-params";
import { StatusBadge as ConversionStatusBadge } from "../conversions/StatusBadge";
import { type DeliveryEvent, eventsChanged, webhooksApi } from "./api";
import { ActionResult, type Result, StatusBadge } from "./parts";
import { attemptsQuery, eventQuery, refreshWhileWaiting, webhookQuery } from "./queries";
import { changesSoon } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const deliveryRoute = getRouteApi("/app/webhooks/deliveries/$eventId");

const when = (iso: string | null) => (iso ? formatDateTime(iso) : "—");

/** One delivery event (GET events/{id}) and its attempts, each with the request sent and the answer got. */
export function DeliveryPage() {
  const { eventId } = deliveryRoute.useParams();
  const event = useQuery({
    ...eventQuery(eventId),
    refetchInterval: (query) =>
      refreshWhileWaiting(query.state.data ? changesSoon(query.state.data, Date.now()) : false),
  });
  return (
    <>
      <p className="breadcrumb">
        <Link to="/webhooks">Outgoing webhooks</Link> / <Link to="/webhooks/deliveries">Delivery log</Link> / Event
      </p>
      {event.isPending ? (
        <Loading label="Loading the delivery…" />
      ) : event.isError ? (
        <>
          <h1>Delivery</h1>
          <ErrorState error={event.error} onRetry={() => void event.refetch()} />
        </>
      ) : (
        <Delivery event={event.data} />
      )}
    </>
  );
}

function Delivery({ event }: { event: DeliveryEvent }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const can = useCan();
  const webhook = useQuery(webhookQuery(event.webhookId));
  const [result, setResult] = useState<Result>(null);
  const resend = useMutation({
    mutationFn: () => webhooksApi.resend(event.id),
    onSuccess: () => setResult({ tone: "ok", text: "Queued for a new attempt." }),
    onError: (error) => setResult({ tone: "error", text: messageOf(error) }),
    onSettled: () => eventsChanged(client),
  });
  const remove = useMutation({
    mutationFn: () => webhooksApi.removeEvent(event.id),
    onSuccess: async () => {
      await navigate({ to: "/webhooks/deliveries", search: { webhookId: event.webhookId } });
      await eventsChanged(client);
    },
    onError: (error) => setResult({ tone: "error", text: messageOf(error) }),
  });

  const facts: [string, ReactNode][] = [
    ["Status", <StatusBadge key="status" status={event.status} />],
    [
      "Webhook",
      <Link key="webhook" to="/webhooks/$webhookId" params={{ webhookId: event.webhookId }}>
        {webhook.data?.name ?? event.webhookId}
      </Link>,
    ],
    ["Conversion type", event.conversionType],
    [
      "Conversion status",
      event.conversionStatus ? <ConversionStatusBadge key="conversion-status" status={event.conversionStatus} /> : "—",
    ],
    ["Conversion", event.conversionId ?? "—"],
    ["Click", event.clickId ?? "—"],
    ["Simulated", event.simulated ? "Yes: a sample, not a conversion to pay for" : "No"],
    ["Attempts", formatInteger(event.attempts)],
    ["Created", formatDateTime(event.createdAt)],
    ["Last attempt", when(event.lastAttemptAt)],
    ["Next attempt", when(event.nextAttemptAt)],
  ];

  return (
    <>
      <div className="page-head webhook-head">
        <h1>
          Delivery <code>{event.id}</code>
        </h1>
        {can("webhooks.update") && (
          <p className="actions">
            <button
              type="button"
              className="button primary"
              disabled={resend.isPending}
              onClick={() => {
                setResult(null);
                resend.mutate();
              }}
            >
              Resend
            </button>
            {can("traffic-sources.delete") && (
              <ConfirmButton
                label="Delete event"
                danger
                disabled={remove.isPending}
                question="Delete this event with its attempts? This cannot be undone."
                onConfirm={() => remove.mutate()}
              />
            )}
          </p>
        )}
      </div>
      <ActionResult result={result} />
      <section className="panel">
        <Facts facts={facts} />
      </section>
      <Attempts event={event} />
    </>
  );
}

function Attempts({ event }: { event: DeliveryEvent }) {
  const search = deliveryRoute.useSearch();
  const navigate = useNavigate({ from: "/webhooks/deliveries/$eventId" });
  const offset = search.offset ?? 0;
  const attempts = useQuery({
    ...attemptsQuery(event.id, offset, event.attempts),
    enabled: event.attempts !== undefined,
  });
  return (
    <section aria-labelledby="attempts-title">
      <h2 id="attempts-title" className="attempts-title">
        Attempts
      </h2>
      {attempts.isPending ? (
        <Loading label="Loading attempts…" />
      ) : attempts.isError ? (
        <ErrorState error={attempts.error} onRetry={() => void attempts.refetch()} />
      ) : attempts.data.data.length === 0 ? (
        <Empty>No attempt yet: the event is {event.status.toLowerCase()}.</Empty>
      ) : (
        <>
          {attempts.data.data.map((a) => (
            <AttemptView key={a.id} attempt={a} />
          ))}
          <Pager
            page={attempts.data.pagination}
            label="Attempts"
            onOffset={(next) => void navigate({ search: withOffset(search, next) })}
          />
        </>
      )}
    </section>
  );
}
