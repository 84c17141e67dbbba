import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import { useState } from "react";
import type { Column } from "../../components/DataTable";
import { HistoryList } from "../../components/HistoryList";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime, formatInteger } from "../../format";
import { useMe } from "../../me";
import { allWebhooksQuery, conversionEventsQuery } from "../webhooks/queries";
import { StatusBadge as ConversionStatusBadge } from "./StatusBadge";
import { shortDateTime } from "./search";

const PAGE_SIZE = 25;
/** Statuses the delivery worker will still change: the list is read again while any shows. */
const WAITING = new Set(["Queued", "Retrying"]);

interface PostbackRow {
  id: string;
  webhookId: string;
  status: string;
  conversionStatus: string | null;
  attempts: number;
  createdAt: string;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  simulated: boolean;
}

/** A short UTC time with the long one in its title; `none` when there is no such instant. */
function When({ iso, none }: { iso: string | null; none: string }) {
  if (!iso) return <span className="muted">{none}</span>;
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {shortDateTime(iso)}
    </time>
  );
}

/** The outgoing-webhook deliveries (postbacks) this conversion caused, each linked to its attempt log. */
export function Postbacks({ conversionId }: { conversionId: string }) {
  const me = useMe();
  // Delivery events need account.admin: without it the section says so instead of failing.
  const allowed = me.data?.permissions.includes("account.admin") ?? false;
  const [offset, setOffset] = useState(0);
  const events = useQuery({
    ...conversionEventsQuery(conversionId, offset, PAGE_SIZE),
    enabled: allowed,
    refetchInterval: (query) => (query.state.data?.data.some((e) => WAITING.has(e.status)) ? 3_000 : false),
  });
  const hooks = useQuery({ ...allWebhooksQuery, enabled: allowed });
  const names = new Map((hooks.data ?? []).map((h) => [h.id, h.name]));

  const columns: Column<PostbackRow>[] = [
    {
      key: "id",
      label: "Delivery",
      cell: (e) => (
        <Link to="/webhooks/deliveries/$eventId" params={{ eventId: e.id }} search={{}}>
          <code className="truncated" title={e.id}>
            {e.id}
          </code>
        </Link>
      ),
    },
    {
      key: "webhookId",
      label: "Webhook",
      cell: (e) => (
        <Link to="/webhooks/$webhookId" params={{ webhookId: e.webhookId }} search={{}}>
          {names.get(e.webhookId) ?? e.webhookId}
        </Link>
      ),
    },
    {
      key: "status",
      label: "Status",
      cell: (e) => (
        <>
          <span className={`badge delivery-${e.status.toLowerCase()}`}>{e.status}</span>
          {e.simulated && <span className="muted small"> simulated</span>}
        </>
      ),
    },
    {
      key: "conversionStatus",
      label: "Sent as",
      cell: (e) => (e.conversionStatus ? <ConversionStatusBadge status={e.conversionStatus} /> : "—"),
    },
    { key: "attempts", label: "Attempts", numeric: true, cell: (e) => formatInteger(e.attempts) },
    { key: "lastAttemptAt", label: "Last attempt (UTC)", cell: (e) => <When iso={e.lastAttemptAt} none="not yet" /> },
    // Only while a delivery waits for a retry is there a next attempt to show.
    ...(events.data?.data.some((e) => e.nextAttemptAt)
      ? [
          {
            key: "nextAttemptAt",
            label: "Next attempt (UTC)",
            cell: (e: PostbackRow) => <When iso={e.nextAttemptAt} none="none" />,
          },
        ]
      : []),
  ];

  return (
    <section className="panel" aria-labelledby="postbacks-title" aria-busy={events.isFetching}>
      <h2 id="postbacks-title">Postbacks (outgoing webhooks)</h2>
      {me.isPending ? (
        <Loading label="Loading…" />
      ) : me.isError ? (
        <ErrorState error={me.error} onRetry={() => void me.refetch()} />
      ) : !allowed ? (
        <p className="muted">Only account administrators can see the postbacks a conversion caused.</p>
      ) : (
        <div className="conversions-table">
          <HistoryList
            list={events}
            rowsOf={(d) => ({ rows: d.data, page: d.pagination })}
            caption="Postbacks this conversion caused"
            columns={columns}
            rowKey={(e) => e.id}
            empty="This conversion caused no postbacks: no enabled webhook matched it, or its type never fires them."
            loading="Loading the postbacks…"
            pagerLabel="Postbacks"
            onOffset={setOffset}
            pagerOnlyWhenPaged
          />
        </div>
      )}
    </section>
  );
}
