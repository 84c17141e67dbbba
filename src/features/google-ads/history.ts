import type { Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import type { GoogleAnswer } from "./client.js";
import type { ItemOutcome, UploadStatus } from "./schemas.js";

export interface Upload {
  id: string;
  createdAt: string;
  status: UploadStatus;
  events: number;
  accepted: number;
  refused: number;
  attempts: number;
  nextAttemptAt: string | null;
  response: GoogleAnswer | null;
}

export interface UploadItem {
  conversionId: string;
  conversionType: string;
  gclid: string;
  outcome: ItemOutcome;
  reason: string | null;
  /** What Google was (not) told of a change of the conversion's status after its upload. */
  statusNote: string | null;
}

/** A conversion not taken into an upload: waiting for one, or withdrawn before it. */
export interface QueueItem extends UploadItem {
  createdAt: string;
  outcome: "pending" | "withdrawn";
}

interface ItemRow {
  conversion_id: string;
  conversion_type: string;
  gclid: string;
  outcome: ItemOutcome;
  reason: string | null;
  status_note: string | null;
}

const ITEM_COLUMNS = "q.conversion_id, q.conversion_type, q.gclid, q.outcome, q.reason, q.status_note";

const toItem = (item: ItemRow): UploadItem => ({
  conversionId: item.conversion_id,
  conversionType: item.conversion_type,
  gclid: item.gclid,
  outcome: item.outcome,
  reason: item.reason,
  statusNote: item.status_note,
});

interface UploadRow {
  id: string;
  created_at: Date;
  status: UploadStatus;
  events: number;
  accepted: number;
  refused: number;
  attempts: number;
  next_attempt_at: Date | null;
  response: GoogleAnswer | null;
}

const toUpload = (row: UploadRow): Upload => ({
  id: row.id,
  createdAt: new Date(row.created_at).toISOString(),
  status: row.status,
  events: row.events,
  accepted: row.accepted,
  refused: row.refused,
  attempts: row.attempts,
  nextAttemptAt: row.next_attempt_at ? new Date(row.next_attempt_at).toISOString() : null,
  response: row.response,
});

const COLUMNS =
  "u.id, u.created_at, u.status, u.events, u.accepted, u.refused, u.attempts, u.next_attempt_at, u.response";

/** The integration's uploads, newest first. */
export async function listUploads(
  db: Queryable,
  tenantId: string,
  trafficSourceId: number,
  filter: { offset: number; limit: number; status?: UploadStatus | undefined },
): Promise<{ items: Upload[]; total: number }> {
  const where = new Conditions("u.tenant_id = $1 and u.traffic_source_id = $2", tenantId, trafficSourceId).add(
    "u.status = $",
    filter.status,
  );
  const { rows, total } = await selectPage<UploadRow>(
    db,
    {
      select: COLUMNS,
      from: "google_ads_uploads u",
      where: where.sql,
      params: where.params,
      orderBy: "u.created_at desc, u.id desc",
    },
    filter,
  );
  return { items: rows.map(toUpload), total };
}

/** One upload with the conversions it holds and each one's outcome. */
export async function getUpload(
  db: Queryable,
  tenantId: string,
  trafficSourceId: number,
  uploadId: string,
): Promise<(Upload & { items: UploadItem[] }) | null> {
  const [row] = await db.query<UploadRow>(
    `select ${COLUMNS} from google_ads_uploads u where u.tenant_id = $1 and u.traffic_source_id = $2 and u.id = $3`,
    [tenantId, trafficSourceId, uploadId],
  );
  if (!row) return null;
  const items = await db.query<ItemRow>(
    `select ${ITEM_COLUMNS} from google_ads_items q where q.upload_id = $1 order by q.created_at, q.conversion_id`,
    [uploadId],
  );
  return { ...toUpload(row), items: items.map(toItem) };
}

/** The integration's conversions not taken into an upload, oldest first: queued, or withdrawn before it. */
export async function listQueue(
  db: Queryable,
  tenantId: string,
  trafficSourceId: number,
  filter: { offset: number; limit: number; outcome?: QueueItem["outcome"] | undefined },
): Promise<{ items: QueueItem[]; total: number }> {
  const where = new Conditions(
    "q.tenant_id = $1 and q.traffic_source_id = $2 and q.upload_id is null",
    tenantId,
    trafficSourceId,
  ).add("q.outcome = $", filter.outcome);
  const { rows, total } = await selectPage<ItemRow & { created_at: Date }>(
    db,
    {
      select: `${ITEM_COLUMNS}, q.created_at`,
      from: "google_ads_items q",
      where: where.sql,
      params: where.params,
      orderBy: "q.created_at, q.conversion_id",
    },
    filter,
  );
  return {
    items: rows.map((row) => ({
      ...toItem(row),
      outcome: row.outcome === "withdrawn" ? "withdrawn" : "pending",
      createdAt: new Date(row.created_at).toISOString(),
    })),
    total,
  };
}
