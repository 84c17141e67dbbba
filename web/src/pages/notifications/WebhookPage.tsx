import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { ConfirmButton } from "../../components/ConfirmButton";
import { SecretOnce } from "../../components/SecretOnce";
import { ErrorState, Loading, messageOf } from "../../components/states";
import { formatDateTime } from "../../format";
import { useCan } from "../../permissions";
import { Deliveries } from "./Deliveries";
import { EventList } from "./EventList";
import { isEventType } from "./events";
import { HOOKS, webhookQuery } from "./queries";
import { TestMessage } from "./TestMessage";
import { WebhookForm, type WebhookValues } from "./WebhookForm";
import "./notifications.css";
import { Fact } from "../../components/Facts";

// The page reaches its route by id: its routes module imports it, never the other way.
const notificationWebhookRoute = getRouteApi("/app/notifications/$webhookId");

/** One operational webhook: its registration, edit, secret rotation, deletion and delivery history. */
export function WebhookPage() {
  const { webhookId } = notificationWebhookRoute.useParams();
  const navigate = useNavigate();
  const queryClient = useQueryClient();
  const admin = useCan()("account.admin");
  const hook = useQuery(webhookQuery(webhookId));
  const [editing, setEditing] = useState(false);
  const [secret, setSecret] = useState<string | null>(null);
  const [saved, setSaved] = useState<string | null>(null);

  const refresh = () => queryClient.invalidateQueries({ queryKey: HOOKS });
  const update = useMutation({
    mutationFn: async (values: WebhookValues) =>
      (
        await unwrap(
          api.PATCH("/api/v1/notifications/webhooks/{id}", {
            params: { path: { id: webhookId } },
            body: { url: values.url, events: values.events, description: values.description.trim() || null },
          }),
        )
      ).data,
    onSuccess: () => {
      setEditing(false);
      setSaved("Saved.");
      void refresh();
    },
  });
  const rotate = useMutation({
    gcTime: 0,
    mutationFn: async () =>
      (
        await unwrap(
          api.POST("/api/v1/notifications/webhooks/{id}/rotate-secret", { params: { path: { id: webhookId } } }),
        )
      ).data,
    onSuccess: (rotated) => {
      rotate.reset();
      setSaved(null);
      setSecret(rotated.secret);
      void refresh();
    },
  });
  const remove = useMutation({
    mutationFn: async () =>
      unwrap(api.DELETE("/api/v1/notifications/webhooks/{id}", { params: { path: { id: webhookId } } })),
    onSuccess: async () => {
      // Only the list refetches: this page's own queries would ask about a webhook that is gone.
      await queryClient.invalidateQueries({ queryKey: [...HOOKS, "list"] });
      await navigate({ to: "/notifications" });
      queryClient.removeQueries({ queryKey: [...HOOKS, "one", webhookId] });
      queryClient.removeQueries({ queryKey: [...HOOKS, "deliveries", webhookId] });
    },
  });
  const failure = rotate.error ?? remove.error;

  return (
    <>
      <p className="breadcrumb">
        <Link to="/notifications">Operational webhooks</Link> / Webhook
      </p>
      {hook.isPending ? (
        <Loading label="Loading the webhook…" />
      ) : hook.isError ? (
        <>
          <h1>Operational webhook</h1>
          <ErrorState error={hook.error} onRetry={() => void hook.refetch()} />
        </>
      ) : (
        <>
          <div className="page-head">
            <h1 className="hook-url">{hook.data.url}</h1>
            {admin && !editing && (
              <p className="actions">
                <button
                  type="button"
                  className="button secondary"
                  onClick={() => {
                    setSaved(null);
                    setEditing(true);
                  }}
                >
                  Edit
                </button>
                <ConfirmButton
                  label="Rotate secret"
                  disabled={rotate.isPending}
                  question="Issue a new signing secret? The current one keeps signing alongside it for 24 hours, so the receiver can switch without a gap; rotating again within those hours drops the oldest at once."
                  onConfirm={() => rotate.mutate()}
                />
                <ConfirmButton
                  label="Delete"
                  danger
                  disabled={remove.isPending}
                  question="Delete this webhook with its delivery history? Messages not yet sent are dropped."
                  onConfirm={() => remove.mutate()}
                />
              </p>
            )}
          </div>
          {failure != null && (
            <p className="notice error" role="alert">
              {messageOf(failure)}
            </p>
          )}
          {saved && (
            <p className="notice" role="status">
              {saved}
            </p>
          )}
          {secret && <SecretOnce title="The new signing secret" value={secret} onDone={() => setSecret(null)} />}
          {editing ? (
            <WebhookForm
              title="Edit the webhook"
              initial={{
                url: hook.data.url,
                description: hook.data.description ?? "",
                events: hook.data.events.filter(isEventType),
              }}
              submitLabel="Save"
              pending={update.isPending}
              error={update.error}
              onSubmit={(values) => update.mutate(values)}
              onCancel={() => {
                update.reset();
                setEditing(false);
              }}
            />
          ) : (
            <section className="panel" aria-labelledby="registration-title">
              <h2 id="registration-title">Registration</h2>
              <dl className="facts">
                <Fact label="ID">
                  <code>{hook.data.id}</code>
                </Fact>
                <Fact label="Description">{hook.data.description ?? <span className="muted">none</span>}</Fact>
                <Fact label="Events">
                  <EventList events={hook.data.events} />
                </Fact>
                <Fact label="Previous secret">
                  {hook.data.previousSecretExpiresAt
                    ? `Signs alongside the current one until ${formatDateTime(hook.data.previousSecretExpiresAt)}`
                    : "None: only the current secret signs"}
                </Fact>
                <Fact label="Registered">{formatDateTime(hook.data.createdAt)}</Fact>
                <Fact label="Changed">{formatDateTime(hook.data.updatedAt)}</Fact>
              </dl>
            </section>
          )}
          {admin && !editing && <TestMessage webhookId={webhookId} />}
          <Deliveries webhookId={webhookId} />
        </>
      )}
    </>
  );
}
