import { useMutation, useQueries, useQuery, useQueryClient } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { type FormEvent, useState } from "react";
import { ConfirmButton } from "../../components/ConfirmButton";
import { type Column, DataTable } from "../../components/DataTable";
import { Field } from "../../components/Field";
import { Pager } from "../../components/Pager";
import { ErrorState, Loading, messageOf } from "../../components/states";
import { formatDateTime } from "../../format";
import { useCan } from "../../permissions";
import { withOffset } from "../../search-params";
import { type Webhook, webhookChanged, webhooksApi } from "./api";
import { ActionResult, type Result, StatusBadge, WebhookTabs } from "./parts";
import { allWebhooksQuery, webhookListQuery, webhookSourceQuery } from "./queries";
import { WEBHOOK_STATUSES, type WebhookListSearch } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const webhooksRoute = getRouteApi("/app/webhooks");

/** The tenant's outgoing webhooks (GET settings), with what the person may do to each. */
export function WebhooksPage() {
  const search = webhooksRoute.useSearch();
  const navigate = useNavigate({ from: "/webhooks" });
  const can = useCan();
  const list = useQuery(webhookListQuery(search));
  const sources = useTrafficSources();
  const [result, setResult] = useState<Result>(null);
  const sourceName = (id: number | null) =>
    id === null ? "Every conversion" : (sources.data?.find((s) => s.id === id)?.name ?? `Traffic source ${id}`);

  const columns: Column<Webhook>[] = [
    {
      key: "name",
      label: "Name",
      cell: (w) => (
        <Link to="/webhooks/$webhookId" params={{ webhookId: w.id }}>
          {w.name}
        </Link>
      ),
    },
    {
      key: "status",
      label: "Status",
      cell: (w) => (
        <>
          <StatusBadge status={w.status} />
          {w.statusReason && <p className="muted small">{w.statusReason}</p>}
        </>
      ),
    },
    {
      key: "url",
      label: "URL template",
      cell: (w) => (
        <>
          <span className="muted small">{w.method}</span> <code className="url-cell">{w.url}</code>
        </>
      ),
    },
    { key: "level", label: "Fires for", cell: (w) => sourceName(w.trafficSourceId) },
    {
      key: "types",
      label: "Types",
      cell: (w) => (w.conversionTypes.length === 0 ? <span className="muted">All</span> : w.conversionTypes.join(", ")),
    },
    { key: "updated", label: "Changed", cell: (w) => formatDateTime(w.updatedAt) },
    {
      key: "actions",
      label: "Actions",
      cell: (w) => <RowActions webhook={w} canUpdate={can("webhooks.update")} onResult={setResult} />,
    },
  ];

  const setSearch = (next: WebhookListSearch) => void navigate({ search: next });
  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    const form = new FormData(event.currentTarget);
    const status = String(form.get("status") ?? "");
    const text = String(form.get("search") ?? "").trim();
    setSearch({
      ...(WEBHOOK_STATUSES.some((s) => s === status) ? { status: status as Webhook["status"] } : {}),
      ...(text ? { search: text } : {}),
    });
  };

  return (
    <>
      <div className="page-head">
        <div>
          <h1>Outgoing webhooks</h1>
          <p className="muted">Postbacks of each conversion to the URLs you set, such as your traffic sources.</p>
        </div>
        {can("webhooks.update") && (
          <Link to="/webhooks/new" className="button primary">
            New webhook
          </Link>
        )}
      </div>
      <WebhookTabs current="settings" />
      <form className="toolbar filters" onSubmit={onFilter} aria-label="Filter webhooks">
        <Field label="Status">
          {(props) => (
            <select {...props} name="status" defaultValue={search.status ?? ""} key={search.status ?? ""}>
              <option value="">Any</option>
              {WEBHOOK_STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Name contains">
          {(props) => <input {...props} name="search" defaultValue={search.search ?? ""} key={search.search ?? ""} />}
        </Field>
        <button type="submit" className="button secondary">
          Filter
        </button>
      </form>
      <ActionResult result={result} />
      {list.isPending ? (
        <Loading label="Loading webhooks…" />
      ) : list.isError ? (
        <ErrorState error={list.error} onRetry={() => void list.refetch()} />
      ) : (
        <>
          <DataTable
            caption="Outgoing webhooks"
            columns={columns}
            rows={list.data.data}
            rowKey={(w) => w.id}
            empty={
              search.status || search.search
                ? "No webhook matches these filters."
                : "No webhooks yet. A webhook sends each conversion to a URL you choose."
            }
          />
          <Pager
            page={list.data.pagination}
            label="Webhooks"
            onOffset={(offset) => setSearch(withOffset(search, offset))}
          />
        </>
      )}
    </>
  );
}

/** Enable or disable, simulate, see deliveries, delete: each action only with webhooks.update. */
function RowActions({
  webhook,
  canUpdate,
  onResult,
}: {
  webhook: Webhook;
  canUpdate: boolean;
  onResult: (result: Result) => void;
}) {
  const client = useQueryClient();
  const refused = (error: unknown) => onResult({ tone: "error", text: `${webhook.name}: ${messageOf(error)}` });
  const status = useMutation({
    mutationFn: (next: "Enabled" | "Disabled") => webhooksApi.update(webhook.id, { status: next }),
    onSuccess: (saved) => onResult({ tone: "ok", text: `${saved.name} is now ${saved.status}.` }),
    onError: refused,
    onSettled: () => webhookChanged(client),
  });
  const simulate = useMutation({
    mutationFn: () => webhooksApi.simulate(webhook.id),
    onSuccess: ({ eventId }) =>
      onResult({
        tone: "ok",
        text: (
          <>
            A sample conversion is on its way to {webhook.name}:{" "}
            <Link to="/webhooks/deliveries/$eventId" params={{ eventId }}>
              its delivery
            </Link>
            .
          </>
        ),
      }),
    onError: refused,
    onSettled: () => webhookChanged(client),
  });
  const remove = useMutation({
    mutationFn: () => webhooksApi.remove(webhook.id),
    onSuccess: () => onResult({ tone: "ok", text: `${webhook.name} was deleted.` }),
    onError: refused,
    onSettled: () => webhookChanged(client),
  });
  const busy = status.isPending || simulate.isPending || remove.isPending;
  return (
    <div className="row-actions">
      <Link
        to="/webhooks/deliveries"
        search={{ webhookId: webhook.id }}
        className="button secondary"
        aria-label={`Deliveries of ${webhook.name}`}
      >
        Deliveries
      </Link>
      {canUpdate && (
        <>
          {webhook.status === "Enabled" ? (
            <button
              type="button"
              className="button secondary"
              disabled={busy}
              aria-label={`Disable ${webhook.name}`}
              onClick={() => status.mutate("Disabled")}
            >
              Disable
            </button>
          ) : (
            <button
              type="button"
              className="button secondary"
              disabled={busy}
              aria-label={`Enable ${webhook.name}`}
              onClick={() => status.mutate("Enabled")}
            >
              Enable
            </button>
          )}
          {webhook.status === "Enabled" && (
            <button
              type="button"
              className="button secondary"
              disabled={busy}
              aria-label={`Simulate ${webhook.name}`}
              onClick={() => simulate.mutate()}
            >
              Simulate
            </button>
          )}
          <ConfirmButton
            label="Delete"
            danger
            disabled={busy}
            question={`Delete the webhook ${webhook.name}? Its postbacks stop at once, and its delivery history (events and attempts) is deleted with it.`}
            onConfirm={() => remove.mutate()}
          />
        </>
      )}
    </div>
  );
}

/**
 * The traffic sources the tenant's webhooks fire for, read one by one (the form finds others by
 * typing): their names for the webhook list.
 */
function useTrafficSources() {
  const webhooks = useQuery(allWebhooksQuery);
  const ids = [
    ...new Set((webhooks.data ?? []).flatMap((w) => (w.trafficSourceId === null ? [] : [w.trafficSourceId]))),
  ];
  return useQueries({
    queries: ids.map(webhookSourceQuery),
    combine: (results) => ({ data: results.flatMap((result) => (result.data ? [result.data] : [])) }),
  });
}
