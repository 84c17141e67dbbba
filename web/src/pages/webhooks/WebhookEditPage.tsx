import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { ErrorState, Loading, messageOf } from "../../components/states";
import { formatDateTime } from "../../format";
import { useCan } from "../../permissions";
import { type NewWebhook, type Webhook, webhookChanged, webhooksApi } from "./api";
import { ActionResult, type Result, StatusBadge } from "./parts";
import { webhookQuery } from "./queries";
import { draftOf, emptyDraft, WebhookForm } from "./WebhookForm";

// The page reaches its route by id: its routes module imports it, never the other way.
const editWebhookRoute = getRouteApi("/app/webhooks/$webhookId");

function Breadcrumb({ name }: { name: string }) {
  return (
    <p className="breadcrumb">
      <Link to="/webhooks">Outgoing webhooks</Link> / {name}
    </p>
  );
}

/** A new webhook (POST settings); once saved, its own page. */
export function NewWebhookPage() {
  const client = useQueryClient();
  const navigate = useNavigate();
  const can = useCan();
  const create = useMutation({
    mutationFn: (body: NewWebhook) => webhooksApi.create(body),
    onSuccess: async (saved) => {
      await webhookChanged(client);
      await navigate({ to: "/webhooks/$webhookId", params: { webhookId: saved.id }, search: { created: true } });
    },
  });
  return (
    <>
      <Breadcrumb name="New webhook" />
      <h1>New webhook</h1>
      {can("webhooks.update") ? (
        <WebhookForm
          initial={emptyDraft}
          submitLabel="Create webhook"
          saving={create.isPending}
          error={create.error}
          onSave={(body) => create.mutate(body)}
        />
      ) : (
        <p className="notice warning">Creating webhooks needs the webhooks.update permission.</p>
      )}
    </>
  );
}

/** One webhook: its settings to change, simulate, and its deliveries. */
export function EditWebhookPage() {
  const { webhookId } = editWebhookRoute.useParams();
  const { created } = editWebhookRoute.useSearch();
  const webhook = useQuery(webhookQuery(webhookId));
  return (
    <>
      <Breadcrumb name={webhook.data?.name ?? "Webhook"} />
      {webhook.isPending ? (
        <Loading label="Loading the webhook…" />
      ) : webhook.isError ? (
        <>
          <h1>Webhook</h1>
          <ErrorState error={webhook.error} onRetry={() => void webhook.refetch()} />
        </>
      ) : (
        <EditWebhook webhook={webhook.data} created={created === true} />
      )}
    </>
  );
}

function EditWebhook({ webhook, created }: { webhook: Webhook; created: boolean }) {
  const client = useQueryClient();
  const can = useCan();
  const [result, setResult] = useState<Result>(created ? { tone: "ok", text: `${webhook.name} was created.` } : null);
  const update = useMutation({
    mutationFn: (body: NewWebhook) => webhooksApi.update(webhook.id, body),
    onSuccess: (saved) => setResult({ tone: "ok", text: `${saved.name} was saved.` }),
    onSettled: () => webhookChanged(client),
  });
  const simulate = useMutation({
    mutationFn: () => webhooksApi.simulate(webhook.id),
    onSuccess: ({ eventId }) =>
      setResult({
        tone: "ok",
        text: (
          <>
            A sample conversion is on its way:{" "}
            <Link to="/webhooks/deliveries/$eventId" params={{ eventId }}>
              see its delivery
            </Link>
            .
          </>
        ),
      }),
    onError: (error) => setResult({ tone: "error", text: messageOf(error) }),
    onSettled: () => webhookChanged(client),
  });
  return (
    <>
      <div className="page-head webhook-head">
        <div>
          <h1>{webhook.name}</h1>
          <p className="muted">
            <StatusBadge status={webhook.status} /> {webhook.statusReason ?? ""} Created{" "}
            {formatDateTime(webhook.createdAt)}, changed {formatDateTime(webhook.updatedAt)}.
          </p>
        </div>
        <p className="actions">
          <Link to="/webhooks/deliveries" search={{ webhookId: webhook.id }} className="button secondary">
            Deliveries
          </Link>
          {can("webhooks.update") && (
            <button
              type="button"
              className="button secondary"
              disabled={simulate.isPending || webhook.status !== "Enabled"}
              title={webhook.status === "Enabled" ? undefined : "Only an enabled webhook sends a simulation"}
              onClick={() => simulate.mutate()}
            >
              Simulate
            </button>
          )}
        </p>
      </div>
      <ActionResult result={result} />
      {can("webhooks.update") ? (
        // Keyed by the last change, so the form starts again from what the API saved.
        <WebhookForm
          key={webhook.updatedAt}
          initial={draftOf(webhook)}
          submitLabel="Save changes"
          saving={update.isPending}
          error={update.error}
          onSave={(body) => update.mutate(body)}
        />
      ) : (
        <section className="panel">
          <p>
            <code>{webhook.method}</code> <code className="url-cell">{webhook.url}</code>
          </p>
          <p>
            {webhook.statusChanges
              ? "Sends status changes: each change of a conversion's status is one more delivery."
              : "Sends no status changes: each conversion once, none recorded as rejected or reversed."}
          </p>
          <p className="muted">Changing webhooks needs the webhooks.update permission.</p>
        </section>
      )}
    </>
  );
}
