import type { Queryable } from "../../platform/db/index.js";
import { selectPage } from "../../platform/db/paging.js";
import { newId } from "../../platform/ids.js";
import { queueMail } from "../../platform/mail.js";
import { emitNotification } from "../notifications/index.js";

export const ISSUE_KINDS = [
  "api_token_expiring",
  "outgoing_webhook_failed",
  "webhook_url_invalid",
  "webhook_allowance_exceeded",
  "google_ads_upload_failed",
] as const;
export type IssueKind = (typeof ISSUE_KINDS)[number];
export type Severity = "warning" | "error" | "critical";

const RANK: Record<Severity, number> = { warning: 0, error: 1, critical: 2 };

export interface IssueSubject {
  type: string;
  id: string;
  name: string;
}

export interface Issue {
  id: string;
  kind: IssueKind;
  severity: Severity;
  status: "open" | "closed";
  title: string;
  subject: IssueSubject;
  details: Record<string, unknown>;
  openedAt: string;
  updatedAt: string;
  closedAt: string | null;
  /** The reason given by the person who closed it by hand; null otherwise. */
  closedReason: string | null;
}

interface IssueRow {
  id: string;
  tenant_id: string;
  kind: IssueKind;
  severity: Severity;
  status: "open" | "closed";
  title: string;
  subject_type: string;
  subject_id: string;
  subject_name: string;
  details: Record<string, unknown>;
  opened_at: Date;
  updated_at: Date;
  closed_at: Date | null;
  closed_reason: string | null;
}

function toIssue(row: IssueRow): Issue {
  return {
    id: row.id,
    kind: row.kind,
    severity: row.severity,
    status: row.status,
    title: row.title,
    subject: { type: row.subject_type, id: row.subject_id, name: row.subject_name },
    details: row.details,
    openedAt: new Date(row.opened_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
    closedAt: row.closed_at ? new Date(row.closed_at).toISOString() : null,
    closedReason: row.closed_reason,
  };
}

export interface RaiseIssue {
  tenantId: string;
  kind: IssueKind;
  severity: Severity;
  title: string;
  subject: IssueSubject;
  details: Record<string, unknown>;
}

/** What a raise or close did: the transitions that mail and operational events follow. */
export type IssueChange = "opened" | "escalated" | "updated" | "closed" | "none";

async function tenantAdmins(db: Queryable, tenantId: string): Promise<string[]> {
  const rows = await db.query<{ email: string }>(
    "select email from users where tenant_id = $1 and not disabled and 'account.admin' = any(permissions) order by email",
    [tenantId],
  );
  return rows.map((r) => r.email);
}

function describeDetails(details: Record<string, unknown>): string {
  return Object.entries(details)
    .map(([key, value]) => `  ${key}: ${value === null ? "never" : String(value)}`)
    .join("\n");
}

async function mailChange(
  db: Queryable,
  issue: Issue,
  tenantId: string,
  change: IssueChange,
  now: Date,
): Promise<void> {
  if (change === "updated" || change === "none") return;
  const verb = { opened: "Opened", escalated: "Escalated", closed: "Resolved" }[change];
  await queueMail(
    db,
    {
      tenantId,
      to: await tenantAdmins(db, tenantId),
      subject: `[${issue.severity}] ${verb}: ${issue.title}`,
      body: [
        `${verb}: ${issue.title}`,
        "",
        `Issue ${issue.id} (${issue.kind}), severity ${issue.severity}, now ${issue.status}.`,
        `Subject: ${issue.subject.type} '${issue.subject.name}' (${issue.subject.id})`,
        describeDetails(issue.details),
      ].join("\n"),
    },
    now,
  );
}

/**
 * Opens the issue of this kind and subject, reopens it if it was closed, escalates it if the
 * severity rose, or just refreshes its details. Opening, reopening and escalating send mail.
 * Run inside the transaction of the state change that causes it.
 */
export async function raiseIssue(
  db: Queryable,
  input: RaiseIssue,
  now: Date,
): Promise<{ issue: Issue; change: IssueChange }> {
  const [current] = await db.query<IssueRow>(
    `select * from account_issues where tenant_id = $1 and kind = $2 and subject_type = $3 and subject_id = $4 for update`,
    [input.tenantId, input.kind, input.subject.type, input.subject.id],
  );
  let row: IssueRow | undefined;
  let change: IssueChange;
  if (!current) {
    [row] = await db.query<IssueRow>(
      `insert into account_issues (id, tenant_id, kind, severity, status, title, subject_type, subject_id, subject_name, details, opened_at, updated_at)
       values ($1, $2, $3, $4, 'open', $5, $6, $7, $8, $9, $10, $10)
       on conflict (tenant_id, kind, subject_type, subject_id) do nothing returning *`,
      [
        newId("iss"),
        input.tenantId,
        input.kind,
        input.severity,
        input.title,
        input.subject.type,
        input.subject.id,
        input.subject.name,
        JSON.stringify(input.details),
        now,
      ],
    );
    if (!row) return raiseIssue(db, input, now);
    change = "opened";
  } else {
    const reopened = current.status === "closed";
    const escalated = !reopened && RANK[input.severity] > RANK[current.severity];
    change = reopened ? "opened" : escalated ? "escalated" : "updated";
    [row] = await db.query<IssueRow>(
      `update account_issues set severity = $2, status = 'open', title = $3, subject_name = $4, details = $5, updated_at = $6,
              opened_at = case when status = 'closed' then $6 else opened_at end, closed_at = null, closed_reason = null
        where id = $1 returning *`,
      [current.id, input.severity, input.title, input.subject.name, JSON.stringify(input.details), now],
    );
  }
  if (!row) throw new Error("issue row vanished");
  const issue = toIssue(row);
  await mailChange(db, issue, input.tenantId, change, now);
  if (change === "opened") await emitNotification(db, input.tenantId, "issue.opened", { ...issue }, now);
  return { issue, change };
}

/** Closes the open issue of this kind and subject, if any, and mails that it was resolved. */
export async function closeIssue(
  db: Queryable,
  key: { tenantId: string; kind: IssueKind; subject: { type: string; id: string } },
  resolution: string,
  now: Date,
): Promise<{ issue: Issue | null; change: IssueChange }> {
  const [row] = await db.query<IssueRow>(
    `update account_issues set status = 'closed', closed_at = $5, updated_at = $5,
            details = details || jsonb_build_object('resolution', $6::text)
      where tenant_id = $1 and kind = $2 and subject_type = $3 and subject_id = $4 and status = 'open' returning *`,
    [key.tenantId, key.kind, key.subject.type, key.subject.id, now, resolution],
  );
  if (!row) return { issue: null, change: "none" };
  return { issue: await announceClosed(db, row, now), change: "closed" };
}

/** Mails and emits `issue.closed` for a row just closed, automatically or by hand. */
async function announceClosed(db: Queryable, row: IssueRow, now: Date): Promise<Issue> {
  const issue = toIssue(row);
  await mailChange(db, issue, row.tenant_id, "closed", now);
  await emitNotification(db, row.tenant_id, "issue.closed", { ...issue }, now);
  return issue;
}

/**
 * A person closes an open issue with a reason (kept as closedReason). 'missing' for another
 * tenant's or an unknown id, 'closed' when it is already closed. Raising it again reopens it.
 */
export async function closeIssueByHand(
  db: Queryable,
  tenantId: string,
  id: string,
  reason: string,
  now: Date,
): Promise<Issue | "missing" | "closed"> {
  const [row] = await db.query<IssueRow>(
    `update account_issues set status = 'closed', closed_at = $3, updated_at = $3, closed_reason = $4
      where tenant_id = $1 and id = $2 and status = 'open' returning *`,
    [tenantId, id, now, reason],
  );
  if (row) return announceClosed(db, row, now);
  return (await getIssue(db, tenantId, id)) ? "closed" : "missing";
}

/** Closes every open issue about this subject (whatever its kind): the subject is gone or off. */
export async function closeIssuesOfSubject(
  db: Queryable,
  key: { tenantId: string; kinds: IssueKind[]; subject: { type: string; id: string } },
  resolution: string,
  now: Date,
): Promise<Issue[]> {
  const closed: Issue[] = [];
  for (const kind of key.kinds) {
    const { issue } = await closeIssue(db, { tenantId: key.tenantId, kind, subject: key.subject }, resolution, now);
    if (issue) closed.push(issue);
  }
  return closed;
}

export interface IssueFilter {
  status?: "open" | "closed" | undefined;
  kind?: IssueKind | undefined;
  offset: number;
  limit: number;
}

export async function listIssues(
  db: Queryable,
  tenantId: string,
  filter: IssueFilter,
): Promise<{ items: Issue[]; total: number }> {
  const { rows, total } = await selectPage<IssueRow>(
    db,
    {
      select: "*",
      from: "account_issues",
      where: "tenant_id = $1 and ($2::text is null or status = $2) and ($3::text is null or kind = $3)",
      params: [tenantId, filter.status ?? null, filter.kind ?? null],
      orderBy: "updated_at desc, id desc",
    },
    filter,
  );
  return { items: rows.map(toIssue), total };
}

export async function getIssue(db: Queryable, tenantId: string, id: string): Promise<Issue | null> {
  const [row] = await db.query<IssueRow>("select * from account_issues where tenant_id = $1 and id = $2", [
    tenantId,
    id,
  ]);
  return row ? toIssue(row) : null;
}

/** Of these subjects, the ones with an open issue of this kind: lets a batch skip closing what is not open. */
export async function subjectsWithOpenIssue(
  db: Queryable,
  kind: IssueKind,
  subject: { type: string; ids: string[] },
): Promise<string[]> {
  if (subject.ids.length === 0) return [];
  const rows = await db.query<{ subject_id: string }>(
    `select subject_id from account_issues
      where kind = $1 and status = 'open' and subject_type = $2 and subject_id = any($3::text[])`,
    [kind, subject.type, subject.ids],
  );
  return rows.map((r) => r.subject_id);
}
