import type { Queryable } from "../../platform/db/index.js";
import { selectPage } from "../../platform/db/paging.js";
import { newId } from "../../platform/ids.js";
import type { Principal } from "../auth/index.js";

export type Actor =
  | { type: "user"; id: string; name: string }
  | { type: "api_key"; id: string; name: string }
  | { type: "admin" }
  | { type: "system"; name: string };

export interface AuditEntry {
  tenantId: string | null;
  actor: Actor;
  action: string;
  subject?: { type: string; id: string };
  details?: Record<string, unknown>;
  requestId?: string;
  at: Date;
}

/** The audit actor for a caller: an API key is recorded under the key's own name. */
export function actorOf(principal: Principal): Actor {
  return principal.kind === "apiKey"
    ? { type: "api_key", id: principal.tokenId, name: principal.name }
    : { type: "user", id: principal.userId, name: principal.name };
}

export async function recordAudit(db: Queryable, entry: AuditEntry): Promise<void> {
  const { actor } = entry;
  await db.query(
    `insert into audit_log (id, tenant_id, actor_type, actor_id, actor_name, action, subject_type, subject_id, details, request_id, at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)`,
    [
      newId("aud"),
      entry.tenantId,
      actor.type,
      "id" in actor ? actor.id : null,
      actor.type === "admin" ? "admin" : actor.name,
      entry.action,
      entry.subject?.type ?? null,
      entry.subject?.id ?? null,
      JSON.stringify(entry.details ?? {}),
      entry.requestId ?? null,
      entry.at,
    ],
  );
}

export interface AuditRecord {
  id: string;
  actor: { type: string; id: string | null; name: string };
  action: string;
  subject: { type: string; id: string } | null;
  details: Record<string, unknown>;
  requestId: string | null;
  at: string;
}

interface AuditRow {
  id: string;
  actor_type: string;
  actor_id: string | null;
  actor_name: string;
  action: string;
  subject_type: string | null;
  subject_id: string | null;
  details: Record<string, unknown>;
  request_id: string | null;
  at: Date;
}

function toRecord(row: AuditRow): AuditRecord {
  return {
    id: row.id,
    actor: { type: row.actor_type, id: row.actor_id, name: row.actor_name },
    action: row.action,
    subject: row.subject_type && row.subject_id ? { type: row.subject_type, id: row.subject_id } : null,
    details: row.details,
    requestId: row.request_id,
    at: new Date(row.at).toISOString(),
  };
}

export interface AuditFilter {
  action?: string | undefined;
  actorId?: string | undefined;
  dateFrom?: Date | undefined;
  dateTo?: Date | undefined;
  offset: number;
  limit: number;
}

export async function listAudit(
  db: Queryable,
  tenantId: string,
  filter: AuditFilter,
): Promise<{ items: AuditRecord[]; total: number }> {
  const { rows, total } = await selectPage<AuditRow>(
    db,
    {
      select: "*",
      from: "audit_log",
      where: `tenant_id = $1
        and ($2::text is null or action = $2)
        and ($3::text is null or actor_id = $3)
        and ($4::timestamptz is null or at >= $4)
        and ($5::timestamptz is null or at <= $5)`,
      params: [tenantId, filter.action ?? null, filter.actorId ?? null, filter.dateFrom ?? null, filter.dateTo ?? null],
      orderBy: "at desc, id desc",
    },
    filter,
  );
  return { items: rows.map(toRecord), total };
}

export async function getAudit(db: Queryable, tenantId: string, id: string): Promise<AuditRecord | null> {
  const [row] = await db.query<AuditRow>("select * from audit_log where tenant_id = $1 and id = $2", [tenantId, id]);
  return row ? toRecord(row) : null;
}
