import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import type { FormEvent } from "react";
import { useAccountTimeZone } from "../../account-time-zone";
import type { Column } from "../../components/DataTable";
import { Field, fieldError, formError } from "../../components/Field";
import { HistoryList } from "../../components/HistoryList";
import { useUrlForm } from "../../components/useUrlForm";
import { formatDateTime } from "../../format";
import { compact, withOffset } from "../../search-params";
import { postbackLogQueryOptions } from "./queries";
import { OUTCOMES, type Outcome, outcomeLabel, type PostbackLogSearch } from "./search";
import "./logs.css";

const route = getRouteApi("/app/postback-log");

type Line = Awaited<ReturnType<ReturnType<typeof postbackLogQueryOptions>["queryFn"]>>["data"][number];

const dash = (value: string | null) => value ?? "—";

const COLUMNS: Column<Line>[] = [
  { key: "at", label: "Time", cell: (l) => formatDateTime(l.at) },
  { key: "via", label: "Via", cell: (l) => (l.via === "api" ? "API" : "Postback") },
  {
    key: "outcome",
    label: "Outcome",
    cell: (l) => (
      <span className={l.outcome === "refused" ? "badge error" : "badge"} data-outcome={l.outcome}>
        {outcomeLabel(l.outcome)}
      </span>
    ),
  },
  { key: "type", label: "Type", cell: (l) => dash(l.type) },
  {
    key: "clickId",
    label: "Click",
    cell: (l) =>
      l.clickId ? (
        <Link to="/clicks/$clickId" params={{ clickId: l.clickId }} className="mono">
          {l.clickId}
        </Link>
      ) : (
        "—"
      ),
  },
  { key: "externalId", label: "External id", cell: (l) => dash(l.externalId) },
  {
    key: "result",
    label: "Result",
    cell: (l) =>
      l.conversionId ? (
        <Link to="/conversions/$conversionId" params={{ conversionId: l.conversionId }} className="mono">
          {l.conversionId}
        </Link>
      ) : (
        <span className="log-reason">{dash(l.reason)}</span>
      ),
  },
  { key: "query", label: "Sent", cell: (l) => <SentFields query={l.query} /> },
];

/** What a call sent, folded: the fields are for the integrator who asks "we sent it, where is it?". */
function SentFields({ query }: { query: Record<string, string> }) {
  const entries = Object.entries(query);
  if (entries.length === 0) return <span className="muted">nothing</span>;
  return (
    <details className="log-sent">
      <summary>{entries.length === 1 ? "1 field" : `${entries.length} fields`}</summary>
      <dl>
        {entries.map(([name, value]) => (
          <div key={name}>
            <dt>{name}</dt>
            <dd>{value}</dd>
          </div>
        ))}
      </dl>
    </details>
  );
}

/** The postback log: every incoming conversion call and API item with its outcome (GET /api/v1/postback-log). */
export function PostbackLogPage() {
  const search = route.useSearch();
  const navigate = useNavigate();
  const go = (next: PostbackLogSearch) => void navigate({ to: "/postback-log", search: next });
  const account = useAccountTimeZone();
  const list = useQuery({
    ...postbackLogQueryOptions(search, account.zone),
    enabled: account.settled,
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <div className="page-head">
        <h1>Postback log</h1>
      </div>
      <p className="muted">
        Every postback call and every conversion sent through the API, with what became of it: recorded, a duplicate, a
        status change, or refused and why. Kept 30 days; secrets in what was sent are hidden. Days are in{" "}
        {account.zone ?? "the account's time zone"}.
      </p>
      <LogFilters search={search} error={list.error} onApply={go} />
      <section aria-labelledby="postback-log-title" aria-busy={list.isFetching}>
        <h2 id="postback-log-title" className="visually-hidden">
          Incoming conversions, newest first
        </h2>
        <HistoryList
          list={list}
          rowsOf={(d) => ({ rows: d.data, page: d.pagination })}
          caption="Incoming conversions, newest first"
          columns={COLUMNS}
          rowKey={(l) => l.id}
          empty="Nothing matches these filters in the last 30 days."
          loading="Loading the postback log…"
          pagerLabel="Postback log"
          onOffset={(offset) => go(withOffset(search, offset))}
        />
      </section>
    </>
  );
}

interface Values {
  from: string;
  to: string;
  outcome: Outcome | "";
  type: string;
  clickId: string;
  externalId: string;
}

const FIELDS = ["dateFrom", "dateTo", "outcome", "type", "clickId", "externalId"];

function LogFilters({
  search,
  error,
  onApply,
}: {
  search: PostbackLogSearch;
  error: unknown;
  onApply: (next: PostbackLogSearch) => void;
}) {
  const fromUrl = (): Values => ({
    from: search.from ?? "",
    to: search.to ?? "",
    outcome: search.outcome ?? "",
    type: search.type ?? "",
    clickId: search.clickId ?? "",
    externalId: search.externalId ?? "",
  });
  const { values, set } = useUrlForm<Values>(fromUrl, JSON.stringify(search));
  function apply(event: FormEvent) {
    event.preventDefault();
    onApply(
      compact<PostbackLogSearch>({
        from: values.from || undefined,
        to: values.to || undefined,
        outcome: values.outcome || undefined,
        type: values.type.trim() || undefined,
        clickId: values.clickId.trim() || undefined,
        externalId: values.externalId.trim() || undefined,
      }),
    );
  }
  const problem = formError(error, FIELDS);
  return (
    <form className="toolbar log-filters" onSubmit={apply} noValidate aria-label="Filters">
      <Field label="From" error={fieldError(error, "dateFrom")}>
        {(props) => <input {...props} type="date" value={values.from} onChange={set("from")} />}
      </Field>
      <Field label="To" error={fieldError(error, "dateTo")}>
        {(props) => <input {...props} type="date" value={values.to} onChange={set("to")} />}
      </Field>
      <Field label="Outcome" error={fieldError(error, "outcome")}>
        {(props) => (
          <select {...props} value={values.outcome} onChange={set("outcome")}>
            <option value="">Every outcome</option>
            {OUTCOMES.map((o) => (
              <option key={o} value={o}>
                {outcomeLabel(o)}
              </option>
            ))}
          </select>
        )}
      </Field>
      <Field label="Type" error={fieldError(error, "type")}>
        {(props) => <input {...props} value={values.type} onChange={set("type")} placeholder="Deposit" />}
      </Field>
      <Field label="Click id" error={fieldError(error, "clickId")}>
        {(props) => <input {...props} value={values.clickId} onChange={set("clickId")} placeholder="clk_…" />}
      </Field>
      <Field label="External id" error={fieldError(error, "externalId")}>
        {(props) => <input {...props} value={values.externalId} onChange={set("externalId")} />}
      </Field>
      <div className="field actions">
        <button type="submit" className="button">
          Apply
        </button>
      </div>
      {problem && (
        <p className="field-error" role="alert">
          {problem}
        </p>
      )}
    </form>
  );
}
