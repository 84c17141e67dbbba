import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { useState } from "react";
import { api, unwrap } from "../../api/client";
import { type Column, DataTable } from "../../components/DataTable";
import { Pager } from "../../components/Pager";
import { SecretOnce } from "../../components/SecretOnce";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { useMe } from "../../me";
import { useCan } from "../../permissions";
import { withOffset } from "../../search-params";
import { EventList } from "./EventList";
import { HOOKS, webhooksQuery } from "./queries";
import { WebhookForm, type WebhookValues } from "./WebhookForm";
import "./notifications.css";

// The page reaches its route by id: its routes module imports it, never the other way.
const notificationsRoute = getRouteApi("/app/notifications");

interface WebhookRow {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  previousSecretExpiresAt: string | null;
  createdAt: string;
}

const EMPTY: WebhookValues = { url: "", description: "", events: [] };

const columns: Column<WebhookRow>[] = [
  {
    key: "url",
    label: "URL",
    cell: (hook) => (
      <>
        <Link to="/notifications/$webhookId" params={{ webhookId: hook.id }} className="hook-url">
          {hook.url}
        </Link>
        {hook.description && <span className="muted small block">{hook.description}</span>}
      </>
    ),
  },
  { key: "events", label: "Events", cell: (hook) => <EventList events={hook.events} /> },
  {
    key: "rotation",
    label: "Previous secret",
    cell: (hook) =>
      hook.previousSecretExpiresAt ? (
        `also signs until ${formatDateTime(hook.previousSecretExpiresAt)}`
      ) : (
        <span className="muted">none</span>
      ),
  },
  { key: "created", label: "Registered", cell: (hook) => formatDateTime(hook.createdAt) },
];

/**
 * Operational webhooks (GET /api/v1/notifications/webhooks): signed messages about the
 * account's state. A new webhook's signing secret lives only in this page's state until it is
 * dismissed: the API never answers it again.
 */
export function NotificationsPage() {
  const { offset = 0 } = notificationsRoute.useSearch();
  const navigate = useNavigate({ from: "/notifications" });
  const queryClient = useQueryClient();
  const me = useMe();
  const admin = useCan()("account.admin");
  const hooks = useQuery({ ...webhooksQuery(offset), enabled: admin });
  const [registering, setRegistering] = useState(false);
  const [secret, setSecret] = useState<{ url: string; secret: string } | null>(null);
  const register = useMutation({
    gcTime: 0,
    mutationFn: async (values: WebhookValues) =>
      (
        await unwrap(
          api.POST("/api/v1/notifications/webhooks", {
            body: {
              url: values.url,
              events: values.events,
              ...(values.description.trim() ? { description: values.description.trim() } : {}),
            },
          }),
        )
      ).data,
    onSuccess: (created) => {
      register.reset();
      setRegistering(false);
      setSecret({ url: created.url, secret: created.secret });
      void queryClient.invalidateQueries({ queryKey: HOOKS });
    },
  });

  return (
    <>
      <div className="page-head">
        <h1>Operational webhooks</h1>
        {/* A list the API refused (a plan without the feature, say) offers nothing to add either. */}
        {admin && hooks.isSuccess && !registering && !secret && (
          <button type="button" className="button primary" onClick={() => setRegistering(true)}>
            Register a webhook
          </button>
        )}
      </div>
      <p className="muted">
        Signed messages (Standard Webhooks) when something on the account changes: issues, expiring API keys, suspended
        conversion webhooks. These are not the conversion postbacks of Outgoing webhooks.
      </p>
      {secret && (
        <SecretOnce title={`Signing secret of ${secret.url}`} value={secret.secret} onDone={() => setSecret(null)} />
      )}
      {registering && (
        <WebhookForm
          title="Register a webhook"
          initial={EMPTY}
          submitLabel="Register"
          pending={register.isPending}
          error={register.error}
          onSubmit={(values) => register.mutate(values)}
          onCancel={() => {
            register.reset();
            setRegistering(false);
          }}
        />
      )}
      {me.isPending ? (
        <Loading label="Loading your permissions…" />
      ) : me.isError ? (
        <ErrorState error={me.error} onRetry={() => void me.refetch()} />
      ) : !admin ? (
        <p className="notice warning" role="status">
          Operational webhooks are managed by account admins: your permissions do not include <code>account.admin</code>
          .
        </p>
      ) : hooks.isPending ? (
        <Loading label="Loading the webhooks…" />
      ) : hooks.isError ? (
        <ErrorState error={hooks.error} onRetry={() => void hooks.refetch()} />
      ) : (
        <>
          <DataTable
            caption="Operational webhooks"
            columns={columns}
            rows={hooks.data.items}
            rowKey={(hook) => hook.id}
            empty="No operational webhooks yet."
          />
          <Pager
            page={hooks.data.page}
            label="Webhooks"
            onOffset={(next) => void navigate({ search: (prev) => withOffset(prev, next) })}
          />
        </>
      )}
    </>
  );
}
