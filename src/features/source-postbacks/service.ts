import type { Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import { ApiError } from "../../platform/http/errors.js";
import { type Attempt, attemptsPage } from "../outgoing-webhooks/index.js";
import { announcePostbacks } from "./queue.js";
import type { PostbackStatus } from "./schemas.js";

export interface SourcePostback {
  id: string;
  conversionId: string;
  conversionStatus: string;
  status: PostbackStatus;
  attempts: number;
  lastAttemptAt: string | null;
  createdAt: string;
}

interface PostbackRow {
  id: string;
  conversion_id: string;
  conversion_status: string;
  status: PostbackStatus;
  attempts: number;
  last_attempt_at: Date | null;
  created_at: Date;
}

// A postback queued before statuses existed carried an approved conversion (every one was).
const CONVERSION_STATUS = "coalesce(p.snapshot ->> 'conversionStatus', 'approved') as conversion_status";

const iso = (at: Date | null): string | null => (at === null ? null : new Date(at).toISOString());

const toPostback = (row: PostbackRow): SourcePostback => ({
  id: row.id,
  conversionId: row.conversion_id,
  conversionStatus: row.conversion_status,
  status: row.status,
  attempts: row.attempts,
  lastAttemptAt: iso(row.last_attempt_at),
  createdAt: new Date(row.created_at).toISOString(),
});

/** The source must be the caller's (404 otherwise, as for any id of another tenant). */
export async function assertSource(db: Queryable, tenantId: string, sourceId: number): Promise<void> {
  const [row] = await db.query("select 1 from traffic_sources where tenant_id = $1 and id = $2", [tenantId, sourceId]);
  if (!row) throw ApiError.notFound("Traffic source", sourceId);
}

/** The postback must be one of the source's (404 otherwise). */
async function assertPostback(db: Queryable, tenantId: string, sourceId: number, id: string): Promise<void> {
  const [row] = await db.query(
    "select 1 from source_postbacks where tenant_id = $1 and traffic_source_id = $2 and id = $3",
    [tenantId, sourceId, id],
  );
  if (!row) throw ApiError.notFound("Postback", id);
}

export interface PostbackFilter {
  offset: number;
  limit: number;
  status?: PostbackStatus | undefined;
  conversionId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** A source's postbacks, newest first; the date range applies to when they were queued. */
export async function listPostbacks(
  db: Queryable,
  tenantId: string,
  sourceId: number,
  filter: PostbackFilter,
): Promise<{ items: SourcePostback[]; total: number }> {
  await assertSource(db, tenantId, sourceId);
  const where = new Conditions("p.tenant_id = $1 and p.traffic_source_id = $2", tenantId, sourceId)
    .add("p.status = $", filter.status)
    .add("p.conversion_id = $", filter.conversionId)
    .add("p.created_at >= $", filter.from)
    .add("p.created_at <= $", filter.to);
  const { rows, total } = await selectPage<PostbackRow>(
    db,
    {
      select: `p.id, p.conversion_id, ${CONVERSION_STATUS}, p.status, p.attempts, p.last_attempt_at, p.created_at`,
      from: "source_postbacks p",
      where: where.sql,
      params: where.params,
      orderBy: "p.created_at desc, p.id desc",
    },
    filter,
  );
  return { items: rows.map(toPostback), total };
}

/** One page of a postback's attempts, oldest first. */
export async function listPostbackAttempts(
  db: Queryable,
  tenantId: string,
  sourceId: number,
  postbackId: string,
  page: { offset: number; limit: number },
): Promise<{ items: Attempt[]; total: number }> {
  await assertSource(db, tenantId, sourceId);
  await assertPostback(db, tenantId, sourceId, postbackId);
  return attemptsPage(db, { table: "source_postback_attempts", owner: "postback_id" }, tenantId, postbackId, page);
}

/**
 * Queues a postback for a new attempt now, whatever its status (a Failed or Delivered one is sent
 * again); it keeps its attempt count, and a new attempt after the tenth is its last.
 */
export async function resendPostback(
  db: Queryable,
  tenantId: string,
  sourceId: number,
  postbackId: string,
  now: Date,
): Promise<SourcePostback> {
  await assertSource(db, tenantId, sourceId);
  const [row] = await db.query<PostbackRow>(
    `update source_postbacks p set status = 'Queued', next_attempt_at = $4, lease_until = null, lease_token = null
      where p.tenant_id = $1 and p.traffic_source_id = $2 and p.id = $3
     returning p.id, p.conversion_id, ${CONVERSION_STATUS}, p.status, p.attempts, p.last_attempt_at, p.created_at`,
    [tenantId, sourceId, postbackId, now],
  );
  if (!row) throw ApiError.notFound("Postback", postbackId);
  await announcePostbacks(db, tenantId);
  return toPostback(row);
}
