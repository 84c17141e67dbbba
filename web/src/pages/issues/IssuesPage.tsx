import { keepPreviousData, useQuery } from "@tanstack/react-query";
import { getRouteApi, Link, useNavigate } from "@tanstack/react-router";
import { DataTable } from "../../components/DataTable";
import { Pager } from "../../components/Pager";
import { ErrorState, Loading } from "../../components/states";
import { formatDateTime } from "../../format";
import { detailsSummary, kindLabel } from "./details";
import { issuesQuery } from "./queries";
import { ISSUE_KINDS } from "./search";
import "./issues.css";

// The page reaches its route by id: its routes module imports it, never the other way.
const issuesRoute = getRouteApi("/app/issues");

const STATUSES = [
  { value: undefined, label: "All" },
  { value: "open", label: "Open" },
  { value: "closed", label: "Closed" },
] as const;

type Issue = Awaited<ReturnType<ReturnType<typeof issuesQuery>["queryFn"]>>["data"][number];

/** The tenant's issues, open and closed, most recently changed first (GET /api/v1/issues). */
export function IssuesPage() {
  const search = issuesRoute.useSearch();
  const navigate = useNavigate({ from: "/issues" });
  const issues = useQuery({ ...issuesQuery(search), placeholderData: keepPreviousData });
  const noun = search.status ? `${search.status} issues` : "issues";

  return (
    <>
      <div className="page-head">
        <h1>Issues</h1>
      </div>
      <p className="muted">
        What needs attention on the account: expiring API keys, failing or refused webhooks. An issue closes by itself
        once its cause is gone.
      </p>
      <div className="toolbar">
        <ul className="presets" aria-label="Status">
          {STATUSES.map((option) => {
            const active = option.value === search.status;
            return (
              <li key={option.label}>
                <Link
                  to="/issues"
                  search={(prev) => ({ ...prev, status: option.value, offset: undefined })}
                  className={active ? "chip active" : "chip"}
                  // The router marks the chosen one (aria-current); an absent parameter must match an absent
                  // one, or "all" would match every choice. The chip class is ours.
                  activeOptions={{ explicitUndefined: true }}
                  activeProps={{}}
                >
                  {option.label}
                </Link>
              </li>
            );
          })}
        </ul>
        <div className="field inline">
          <label htmlFor="issues-kind">Kind</label>
          <select
            id="issues-kind"
            value={search.kind ?? ""}
            onChange={(event) => {
              const kind = ISSUE_KINDS.find((k) => k === event.target.value);
              void navigate({ search: (prev) => ({ ...prev, kind, offset: undefined }) });
            }}
          >
            <option value="">Every kind</option>
            {ISSUE_KINDS.map((kind) => (
              <option key={kind} value={kind}>
                {kindLabel(kind)}
              </option>
            ))}
          </select>
        </div>
      </div>
      {issues.isPending ? (
        <Loading label="Loading the issues…" />
      ) : issues.isError ? (
        <ErrorState error={issues.error} onRetry={() => void issues.refetch()} />
      ) : (
        <div className="issues-list">
          <DataTable<Issue>
            caption={`The account's ${noun}, most recently changed first`}
            rows={issues.data.data}
            rowKey={(issue) => issue.id}
            columns={COLUMNS}
            empty={
              search.status === "open" && !search.kind ? "No open issues: everything is running." : `No ${noun} here.`
            }
          />
          <Pager
            page={issues.data.pagination}
            label="Issues"
            onOffset={(next) => void navigate({ search: (prev) => ({ ...prev, offset: next > 0 ? next : undefined }) })}
          />
        </div>
      )}
    </>
  );
}

const COLUMNS = [
  {
    key: "severity",
    label: "Severity",
    cell: (issue: Issue) => <span className={`badge ${issue.severity}`}>{issue.severity}</span>,
  },
  {
    key: "title",
    label: "Issue",
    cell: (issue: Issue) => (
      <>
        <Link to="/issues/$issueId" params={{ issueId: issue.id }}>
          {issue.title}
        </Link>
        <span className="issue-kind">{kindLabel(issue.kind)}</span>
      </>
    ),
  },
  {
    key: "subject",
    label: "Subject",
    cell: (issue: Issue) => (
      <>
        {issue.subject.type.replace(/_/g, " ")} <strong>{issue.subject.name}</strong>
      </>
    ),
  },
  {
    key: "details",
    label: "Details",
    cell: (issue: Issue) => <span className="issue-details">{detailsSummary(issue.details)}</span>,
  },
  { key: "status", label: "Status", cell: (issue: Issue) => issue.status },
  {
    key: "when",
    label: "Opened / closed",
    cell: (issue: Issue) => (
      <>
        {formatDateTime(issue.openedAt)}
        {issue.closedAt && <span className="issue-closed">closed {formatDateTime(issue.closedAt)}</span>}
      </>
    ),
  },
];
