import { useQuery } from "@tanstack/react-query";
import { getRouteApi, Link } from "@tanstack/react-router";
import { Facts } from "../../components/Facts";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime, formatLabel } from "../../format";
import { useCan } from "../../permissions";
import { CloseIssue } from "./CloseIssue";
import { showDetail } from "./details";
import { issueQuery } from "./queries";
import "./issues.css";

// The page reaches its route by id: its routes module imports it, never the other way.
const issueRoute = getRouteApi("/app/issues/$issueId");

/**
 * One issue (GET /api/v1/issues/{id}): what it is about and its details; an open one can be
 * closed by hand with a reason (webhooks.update), shown once it is closed.
 */
export function IssuePage() {
  const { issueId } = issueRoute.useParams();
  const can = useCan();
  const issue = useQuery(issueQuery(issueId));
  const data = issue.data;
  const facts: [string, string][] = data
    ? [
        ["Status", data.status],
        ["Subject", `${data.subject.type.replace(/_/g, " ")} ${data.subject.name} (${data.subject.id})`],
        ["Opened", formatDateTime(data.openedAt)],
        ["Updated", formatDateTime(data.updatedAt)],
        ...(data.closedAt ? [["Closed", formatDateTime(data.closedAt)] as [string, string]] : []),
        ...(data.closedReason ? [["Closed because", data.closedReason] as [string, string]] : []),
        ...Object.entries(data.details).map(([key, value]): [string, string] => [formatLabel(key), showDetail(value)]),
      ]
    : [];
  return (
    <>
      <p className="breadcrumb">
        <Link to="/issues">Issues</Link> / Issue
      </p>
      {issue.isPending ? (
        <Loading label="Loading the issue…" />
      ) : issue.isError ? (
        <>
          <h1>Issue</h1>
          <ErrorState error={issue.error} onRetry={() => void issue.refetch()} />
        </>
      ) : (
        <article className="panel">
          <h1>
            <span className={`badge ${issue.data.severity}`}>{issue.data.severity}</span> {issue.data.title}
          </h1>
          <Facts facts={facts} />
          {issue.data.status === "open" && can("webhooks.update") && <CloseIssue issueId={issue.data.id} />}
        </article>
      )}
    </>
  );
}
