import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import type { FormEvent } from "react";
import type { Column } from "../../components/DataTable";
import { Field } from "../../components/Field";
import { HistoryList } from "../../components/HistoryList";
import { formatDateTime, formatInteger } from "../../format";
import { withOffset } from "../../search-params";
import { catalogId } from "../catalog/search";
import type { SentPostback } from "./api";
import { SourceFrame, StatusBadge, when } from "./parts";
import { postbacksQuery, refreshWhile, WAITING } from "./queries";
import { POSTBACK_STATUSES, parsePostbackSearch } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const sourcePostbacksRoute = getRouteApi("/app/catalog/traffic-sources/$sourceId/postbacks");

/** The postbacks sent (or waiting to be) to one traffic source, newest first; filters and page in the address. */
export function PostbacksPage() {
  const id = catalogId(sourcePostbacksRoute.useParams().sourceId) ?? 0;
  return (
    <SourceFrame id={id} section="postbacks" title="Postbacks sent">
      {(source) => <PostbackList id={id} configured={source.postback !== null} />}
    </SourceFrame>
  );
}

function PostbackList({ id, configured }: { id: number; configured: boolean }) {
  const search = sourcePostbacksRoute.useSearch();
  const navigate = useNavigate({ from: "/catalog/traffic-sources/$sourceId/postbacks" });
  const postbacks = useQuery({
    ...postbacksQuery(id, search),
    refetchInterval: (query) => refreshWhile(query.state.data?.data.some((p) => WAITING.has(p.status)) ?? false),
  });
  const filtered = Object.keys(search).some((key) => key !== "offset");
  const sourceId = String(id);

  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: parsePostbackSearch(Object.fromEntries(new FormData(event.currentTarget))) });
  };

  const columns: Column<SentPostback>[] = [
    {
      key: "id",
      label: "Postback",
      cell: (p) => (
        <>
          <Link
            to="/catalog/traffic-sources/$sourceId/postbacks/$postbackId"
            params={{ sourceId, postbackId: p.id }}
            className="event-id"
          >
            {p.id}
          </Link>
          <span className="muted small cell-line">{formatDateTime(p.createdAt)}</span>
        </>
      ),
    },
    {
      key: "conversion",
      label: "Conversion",
      cell: (p) =>
        p.conversionId ? (
          <Link to="/conversions/$conversionId" params={{ conversionId: p.conversionId }} className="event-id">
            {p.conversionId}
          </Link>
        ) : (
          "—"
        ),
    },
    { key: "status", label: "Status", cell: (p) => <StatusBadge status={p.status} /> },
    {
      key: "attempts",
      label: "Attempts",
      cell: (p) => (
        <>
          <span className="cell-line">{formatInteger(p.attempts)}</span>
          <span className="cell-line muted small">Last: {when(p.lastAttemptAt)}</span>
        </>
      ),
    },
  ];

  return (
    <>
      <p className="muted">Each conversion reported to this source's postback URL. Dates are UTC days.</p>
      {/* Keyed by the address, so Back and a shared link show their own filters. */}
      <form key={JSON.stringify(search)} className="toolbar filters" onSubmit={onFilter} aria-label="Filter postbacks">
        <Field label="Status">
          {(props) => (
            <select {...props} name="status" defaultValue={search.status ?? ""}>
              <option value="">Any</option>
              {POSTBACK_STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <Field label="Conversion id">
          {(props) => <input {...props} name="conversionId" defaultValue={search.conversionId ?? ""} />}
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
          <Link
            to="/catalog/traffic-sources/$sourceId/postbacks"
            params={{ sourceId }}
            search={{}}
            className="button secondary"
          >
            Clear filters
          </Link>
        )}
      </form>
      <HistoryList
        list={postbacks}
        rowsOf={(d) => ({ rows: d.data, page: d.pagination })}
        caption="Postbacks sent"
        columns={columns}
        rowKey={(p) => p.id}
        loading="Loading postbacks…"
        pagerLabel="Postbacks"
        onOffset={(offset) => void navigate({ search: withOffset(search, offset) })}
        empty={
          filtered ? (
            "No postback matches these filters."
          ) : configured ? (
            "No postbacks yet: they appear with this source's conversions."
          ) : (
            <>
              No postbacks: this source has no postback URL.{" "}
              <Link to="/catalog/traffic-sources/$sourceId/postback" params={{ sourceId }}>
                Set one up
              </Link>
              .
            </>
          )
        }
      />
    </>
  );
}
