import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import type { FormEvent } from "react";
import type { Column } from "../../components/DataTable";
import { Field } from "../../components/Field";
import { HistoryList } from "../../components/HistoryList";
import { Empty, ErrorState, Loading } from "../../components/states";
import { formatDateTime, formatInteger } from "../../format";
import { withOffset } from "../../search-params";
import { catalogId } from "../catalog/search";
import type { Upload } from "./api";
import { answerText, SourceFrame, UploadBadge, when } from "./parts";
import { googleAdsQuery, refreshWhile, uploadsQuery } from "./queries";
import { parseUploadSearch, UPLOAD_STATUSES } from "./search";

// The page reaches its route by id: its routes module imports it, never the other way.
const googleAdsUploadsRoute = getRouteApi("/app/catalog/traffic-sources/$sourceId/google-ads/uploads");

/** What was sent to Google Ads for one traffic source, newest first: each upload, its counts and Google's answer. */
export function UploadsPage() {
  const id = catalogId(googleAdsUploadsRoute.useParams().sourceId) ?? 0;
  return (
    <SourceFrame id={id} section="uploads" title="Google Ads uploads">
      {() => <IfSetUp id={id} />}
    </SourceFrame>
  );
}

/** The history is the integration's: without one there is none to list (and the API answers 404). */
function IfSetUp({ id }: { id: number }) {
  const setting = useQuery(googleAdsQuery(id));
  if (setting.isPending) return <Loading label="Loading the Google Ads integration…" />;
  if (setting.isError) return <ErrorState error={setting.error} onRetry={() => void setting.refetch()} />;
  if (setting.data === null) {
    return (
      <Empty>
        No uploads: this source has no Google Ads integration.{" "}
        <Link to="/catalog/traffic-sources/$sourceId/google-ads" params={{ sourceId: String(id) }}>
          Set one up
        </Link>
        .
      </Empty>
    );
  }
  return <UploadList id={id} />;
}

function UploadList({ id }: { id: number }) {
  const search = googleAdsUploadsRoute.useSearch();
  const navigate = useNavigate({ from: "/catalog/traffic-sources/$sourceId/google-ads/uploads" });
  const uploads = useQuery({
    ...uploadsQuery(id, search),
    refetchInterval: (query) => refreshWhile(query.state.data?.data.some((u) => u.status === "Retrying") ?? false),
  });
  const sourceId = String(id);

  const onFilter = (event: FormEvent<HTMLFormElement>) => {
    event.preventDefault();
    void navigate({ search: parseUploadSearch(Object.fromEntries(new FormData(event.currentTarget))) });
  };

  const columns: Column<Upload>[] = [
    {
      key: "id",
      label: "Upload",
      cell: (u) => (
        <>
          <Link
            to="/catalog/traffic-sources/$sourceId/google-ads/uploads/$uploadId"
            params={{ sourceId, uploadId: u.id }}
            className="event-id"
          >
            {u.id}
          </Link>
          <span className="muted small cell-line">{formatDateTime(u.createdAt)}</span>
        </>
      ),
    },
    { key: "status", label: "Status", cell: (u) => <UploadBadge status={u.status} /> },
    { key: "events", label: "Conversions", numeric: true, cell: (u) => formatInteger(u.events) },
    { key: "accepted", label: "Accepted", numeric: true, cell: (u) => formatInteger(u.accepted) },
    { key: "refused", label: "Refused", numeric: true, cell: (u) => formatInteger(u.refused) },
    {
      key: "answer",
      label: "Google's answer",
      cell: (u) => (
        <>
          <span className="cell-line answer-text">{answerText(u.response)}</span>
          {u.status === "Retrying" && <span className="cell-line muted small">Next: {when(u.nextAttemptAt)}</span>}
        </>
      ),
    },
  ];

  return (
    <>
      <form key={JSON.stringify(search)} className="toolbar filters" onSubmit={onFilter} aria-label="Filter uploads">
        <Field label="Status">
          {(props) => (
            <select {...props} name="status" defaultValue={search.status ?? ""}>
              <option value="">Any</option>
              {UPLOAD_STATUSES.map((s) => (
                <option key={s}>{s}</option>
              ))}
            </select>
          )}
        </Field>
        <button type="submit" className="button primary">
          Apply
        </button>
        {search.status && (
          <Link
            to="/catalog/traffic-sources/$sourceId/google-ads/uploads"
            params={{ sourceId }}
            search={{}}
            className="button secondary"
          >
            Clear filters
          </Link>
        )}
      </form>
      <HistoryList
        list={uploads}
        rowsOf={(d) => ({ rows: d.data, page: d.pagination })}
        caption="Google Ads uploads"
        columns={columns}
        rowKey={(u) => u.id}
        empty={
          search.status
            ? "No upload matches this filter."
            : "No uploads yet: conversions with a Google click id are uploaded by the worker."
        }
        loading="Loading uploads…"
        pagerLabel="Uploads"
        onOffset={(offset) => void navigate({ search: withOffset(search, offset) })}
      />
    </>
  );
}
