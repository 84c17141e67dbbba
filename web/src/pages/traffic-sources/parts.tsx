import { useQuery } from "@tanstack/react-query";
import { Link } from "@tanstack/react-router";
import type { ReactNode } from "react";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { useCan } from "../../permissions";
import { CatalogTabs } from "../catalog/CatalogLayout";
import { StatusBadge } from "../webhooks/parts";
import type { TrafficSource } from "./api";
import { sourceQuery } from "./queries";
import "./traffic-sources.css";

/**
 * What changing a source's postback or Google Ads integration, or resending a postback, takes:
 * the outgoing webhooks' right, as they send the same conversion data to a host of the caller's
 * choosing (docs/traffic-source-postbacks.md). Seeing them (the postback's URL, what was sent,
 * the uploads) takes READ_PERMISSION.
 */
export const EDIT_PERMISSION = "webhooks.update";
export const READ_PERMISSION = "webhooks.read";

// Only the page itself is the current tab: the Details address is a prefix of the others.
const EXACT = { exact: true, includeSearch: false } as const;

export type Section = "postback" | "postbacks" | "google-ads" | "uploads";

const SECTION_TABS = [
  { section: "postback", to: "/catalog/traffic-sources/$sourceId/postback", label: "Postback" },
  { section: "postbacks", to: "/catalog/traffic-sources/$sourceId/postbacks", label: "Postbacks sent" },
  { section: "google-ads", to: "/catalog/traffic-sources/$sourceId/google-ads", label: "Google Ads" },
  { section: "uploads", to: "/catalog/traffic-sources/$sourceId/google-ads/uploads", label: "Google Ads uploads" },
] as const satisfies readonly { section: Section; to: string; label: string }[];

/** A traffic source's own views, as tabs a keyboard reaches like any link. */
export function SourceTabs({ id, current }: { id: number; current: Section | "details" }) {
  const sourceId = String(id);
  const mark = (section: Section | "details") => (section === current ? "page" : undefined);
  const can = useCan();
  // What was sent and uploaded is the webhooks' to read; the postback's setting also whoever may change it.
  const shown = (tab: (typeof SECTION_TABS)[number]) =>
    can(READ_PERMISSION) || (tab.section === "postback" && can(EDIT_PERMISSION));
  return (
    <nav className="webhook-tabs source-tabs" aria-label="Traffic source">
      <Link
        to="/catalog/$entity/$id"
        params={{ entity: "traffic-sources", id: sourceId }}
        activeOptions={EXACT}
        aria-current={mark("details")}
      >
        Details
      </Link>
      {SECTION_TABS.filter(shown).map((tab) => (
        <Link
          key={tab.section}
          to={tab.to}
          params={{ sourceId }}
          activeOptions={EXACT}
          aria-current={mark(tab.section)}
        >
          {tab.label}
        </Link>
      ))}
    </nav>
  );
}

/**
 * The frame of a source's integration page: the catalog's tabs, where it is, its title and its
 * own tabs; the body gets the source once it is loaded.
 */
export function SourceFrame({
  id,
  section,
  title,
  trail,
  children,
}: {
  id: number;
  section: Section;
  title: string;
  /** A deeper page's own last step (one postback, one upload). */
  trail?: ReactNode;
  children: (source: TrafficSource) => ReactNode;
}) {
  const source = useQuery(sourceQuery(id));
  const name = source.data?.name ?? `#${id}`;
  return (
    <div className="catalog">
      <CatalogTabs />
      <p className="breadcrumb">
        <Link to="/catalog/$entity" params={{ entity: "traffic-sources" }}>
          Traffic sources
        </Link>{" "}
        / {name} / {trail ?? title}
      </p>
      <div className="page-head">
        <h1>
          {name}: {title}
        </h1>
      </div>
      <SourceTabs id={id} current={section} />
      {source.isPending ? (
        <Loading label="Loading the traffic source…" />
      ) : source.isError ? (
        <ErrorState error={source.error} onRetry={() => void source.refetch()} />
      ) : (
        children(source.data)
      )}
    </div>
  );
}

const UPLOAD_TONE: Record<string, string> = { Sent: "ok", Partly: "warning", Retrying: "warning", Failed: "error" };
const OUTCOME_TONE: Record<string, string> = {
  accepted: "ok",
  pending: "info",
  refused: "error",
  withdrawn: "warning",
};

/** A Google Ads upload's status or one item's outcome, coloured like the delivery statuses. */
export function UploadBadge({ status }: { status: string }) {
  return <span className={`badge status-${UPLOAD_TONE[status] ?? OUTCOME_TONE[status] ?? "neutral"}`}>{status}</span>;
}

export { StatusBadge };

export const when = (iso: string | null | undefined) => (iso ? formatDateTime(iso) : "—");

interface Answer {
  httpStatus?: number | null;
  status?: string | null;
  message?: string | null;
}

/** Google's answer to an upload in one line: HTTP status, its status name and message; none when it did not answer. */
export function answerText(answer: Answer | null | undefined): string {
  if (!answer) return "—";
  const parts = [
    answer.httpStatus === null || answer.httpStatus === undefined ? "No answer" : `HTTP ${answer.httpStatus}`,
    answer.status,
    answer.message,
  ].filter((p): p is string => typeof p === "string" && p !== "");
  return parts.join(": ");
}
