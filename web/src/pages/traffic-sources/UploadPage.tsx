import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { type Column, DataTable } from "../../components/DataTable";
import { Facts } from "../../components/Facts";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime, formatInteger } from "../../format";
import { catalogId } from "../catalog/search";
import type { UploadDetail } from "./api";
import { answerText, SourceFrame, UploadBadge, when } from "./parts";
import { uploadQuery } from "./queries";

// The page reaches its route by id: its routes module imports it, never the other way.
const googleAdsUploadRoute = getRouteApi("/app/catalog/traffic-sources/$sourceId/google-ads/uploads/$uploadId");

type Item = UploadDetail["items"][number];

/** One upload to Google Ads: what was sent, what Google answered, and each conversion's outcome. */
export function UploadPage() {
  const params = googleAdsUploadRoute.useParams();
  const id = catalogId(params.sourceId) ?? 0;
  return (
    <SourceFrame
      id={id}
      section="uploads"
      title="Google Ads upload"
      trail={
        <>
          <Link to="/catalog/traffic-sources/$sourceId/google-ads/uploads" params={{ sourceId: String(id) }}>
            Google Ads uploads
          </Link>{" "}
          / {params.uploadId}
        </>
      }
    >
      {() => <UploadView id={id} uploadId={params.uploadId} />}
    </SourceFrame>
  );
}

const ITEM_COLUMNS: Column<Item>[] = [
  {
    key: "conversion",
    label: "Conversion",
    cell: (i) => (
      <Link to="/conversions/$conversionId" params={{ conversionId: i.conversionId }} className="event-id">
        {i.conversionId}
      </Link>
    ),
  },
  { key: "type", label: "Type", cell: (i) => i.conversionType },
  { key: "gclid", label: "Google click id", cell: (i) => <span className="event-id">{i.gclid}</span> },
  { key: "outcome", label: "Outcome", cell: (i) => <UploadBadge status={i.outcome} /> },
  { key: "reason", label: "Reason", cell: (i) => i.reason ?? "—" },
  // A change of the conversion's status after Google took it: what Google was not told.
  { key: "statusNote", label: "Status change", cell: (i) => i.statusNote ?? "—" },
];

function UploadView({ id, uploadId }: { id: number; uploadId: string }) {
  const upload = useQuery(uploadQuery(id, uploadId));
  if (upload.isPending) return <Loading label="Loading the upload…" />;
  if (upload.isError) return <ErrorState error={upload.error} onRetry={() => void upload.refetch()} />;
  const u = upload.data;
  const facts: [string, ReactNode][] = [
    ["Upload", <code key="id">{u.id}</code>],
    ["Status", <UploadBadge key="status" status={u.status} />],
    ["Created", formatDateTime(u.createdAt)],
    ["Attempts", formatInteger(u.attempts)],
    ["Conversions", formatInteger(u.events)],
    ["Accepted", formatInteger(u.accepted)],
    ["Refused", formatInteger(u.refused)],
    ["Next attempt", when(u.nextAttemptAt)],
    [
      "Google's answer",
      <span key="answer" className="answer-text">
        {answerText(u.response)}
      </span>,
    ],
  ];
  return (
    <>
      <section className="panel">
        <Facts facts={facts} />
      </section>
      <h2 className="attempts-title">Conversions in this upload</h2>
      <DataTable
        caption={`Conversions of upload ${u.id}`}
        columns={ITEM_COLUMNS}
        rows={u.items}
        rowKey={(i) => i.conversionId}
        empty="No conversions in this upload."
      />
    </>
  );
}
