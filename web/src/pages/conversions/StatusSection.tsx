import { useMutation, useQuery, useQueryClient } from "@tanstack/react-query";
import { type FormEvent, useState } from "react";
import { api, unwrap } from "../../api/client";
import type { paths } from "../../api/schema";
import { type Column, DataTable } from "../../components/DataTable";
import { Field, FormError, fieldError, formError } from "../../components/Field";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { useCan } from "../../permissions";
import { CONVERSIONS, conversionHistoryQuery } from "./queries";
import { StatusBadge } from "./StatusBadge";
import { CONVERSION_STATUSES, type ConversionStatus, shortDateTime, statusLabel } from "./search";

type HistoryEntry =
  paths["/api/v1/conversions/{id}/history"]["get"]["responses"][200]["content"]["application/json"]["data"][number];

/** The permission PATCH /conversions/{id} needs. */
const UPDATE_PERMISSION = "conversions.update";
/** The API's bound on a reason. */
const REASON_MAX = 500;

const SOURCE_LABELS: Record<HistoryEntry["source"], string> = {
  postback: "Postback",
  api: "API",
  dashboard: "Dashboard",
};

/** Who made an entry: the person or API key by name (its id in the title), or the postback. */
function Who({ by }: { by: HistoryEntry["by"] }) {
  if (by.type === "postback") return <span className="muted">The program's postback</span>;
  const kind = by.type === "user" ? "Person" : "API key";
  const name = by.name ?? by.id ?? "unknown";
  return (
    <span title={by.id ?? undefined}>
      <span className="muted">{kind}:</span> {name}
    </span>
  );
}

type HistoryRow = HistoryEntry & { index: number };

const COLUMNS: Column<HistoryRow>[] = [
  {
    key: "at",
    label: "When (UTC)",
    cell: (e) => (
      <time dateTime={e.at} title={formatDateTime(e.at)}>
        {shortDateTime(e.at)}
      </time>
    ),
  },
  {
    key: "status",
    label: "Status",
    cell: (e) => (
      <>
        <StatusBadge status={e.status} />
        {e.index === 0 && <span className="muted small"> recorded</span>}
      </>
    ),
  },
  {
    key: "reason",
    label: "Reason",
    cell: (e) =>
      e.reason ? (
        <span className="history-reason">{e.reason}</span>
      ) : (
        <span className="muted">
          <span aria-hidden="true">—</span>
          <span className="visually-hidden">none</span>
        </span>
      ),
  },
  { key: "source", label: "Source", cell: (e) => SOURCE_LABELS[e.source] ?? e.source },
  { key: "by", label: "Who", cell: (e) => <Who by={e.by} /> },
];

/**
 * A conversion's status: its history, oldest first (the recording, then each change), and, for a
 * person holding conversions.update, a form to change it with a reason (PATCH /conversions/{id}).
 */
export function StatusSection({ conversionId, status }: { conversionId: string; status: ConversionStatus }) {
  const can = useCan();
  // Above the form, which starts afresh from each new status: the API's answer outlives it.
  const [done, setDone] = useState<string | null>(null);
  const history = useQuery(conversionHistoryQuery(conversionId));
  return (
    <section className="panel status-history" aria-labelledby="status-title" aria-busy={history.isFetching}>
      <div className="status-head">
        <h2 id="status-title">Status</h2>
        <StatusBadge status={status} />
      </div>
      {can(UPDATE_PERMISSION) ? (
        <>
          <ChangeStatus key={status} conversionId={conversionId} status={status} onDone={setDone} />
          <div role="status" aria-live="polite" className="action-result">
            {done && <p className="notice">{done}.</p>}
          </div>
        </>
      ) : (
        <p className="muted small">Changing a conversion's status needs the conversions.update permission.</p>
      )}
      <h3 className="history-title">History</h3>
      {history.isPending ? (
        <Loading label="Loading the history…" />
      ) : history.isError ? (
        <ErrorState error={history.error} onRetry={() => void history.refetch()} />
      ) : (
        <div className="conversions-table">
          <DataTable
            caption="Status history, oldest first"
            columns={COLUMNS}
            rows={history.data.map((entry, index) => ({ ...entry, index }))}
            rowKey={(e) => String(e.index)}
            empty="No history was kept for this conversion."
          />
        </div>
      )}
    </section>
  );
}

function ChangeStatus({
  conversionId,
  status,
  onDone: setDone,
}: {
  conversionId: string;
  status: ConversionStatus;
  /** The API's message after a change (null while one is under way or refused). */
  onDone: (message: string | null) => void;
}) {
  const client = useQueryClient();
  // The first status other than the current one: choosing the same again would change nothing.
  const [next, setNext] = useState<ConversionStatus>(CONVERSION_STATUSES.find((s) => s !== status) ?? status);
  const [reason, setReason] = useState("");
  const change = useMutation({
    mutationFn: async (body: { status: ConversionStatus; reason: string | null }) =>
      unwrap(api.PATCH("/api/v1/conversions/{id}", { params: { path: { id: conversionId } }, body })),
    onSuccess: async (answer) => {
      setDone(answer.message);
      setReason("");
      await client.invalidateQueries({ queryKey: CONVERSIONS });
    },
    onError: () => setDone(null),
  });

  const submit = (event: FormEvent) => {
    event.preventDefault();
    setDone(null);
    change.mutate({ status: next, reason: reason.trim() === "" ? null : reason.trim() });
  };

  return (
    <form className="status-change" onSubmit={submit} noValidate aria-label="Change status">
      <Field label="New status" error={fieldError(change.error, "status")}>
        {(props) => (
          <select {...props} value={next} onChange={(e) => setNext(e.target.value as ConversionStatus)}>
            {CONVERSION_STATUSES.map((s) => (
              <option key={s} value={s}>
                {statusLabel(s)}
                {s === status ? " (current)" : ""}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field
        label="Reason"
        error={fieldError(change.error, "reason")}
        hint="Optional, kept in the history (chargeback, duplicate player)."
      >
        {(props) => (
          <input
            {...props}
            type="text"
            name="reason"
            maxLength={REASON_MAX}
            autoComplete="off"
            value={reason}
            onChange={(e) => setReason(e.target.value)}
          />
        )}
      </Field>
      <p className="actions">
        <button type="submit" className="button primary" disabled={change.isPending}>
          {change.isPending ? "Changing…" : "Change status"}
        </button>
      </p>
      <FormError message={formError(change.error, ["status", "reason"])} />
    </form>
  );
}
