import type { Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import type { GoogleAnswer } from "./client.js";
import type { UploadStatus } from "./schemas.js";

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
  outcome: "accepted" | "refused" | "pending";
  reason: string | null;
}

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
  const items = await db.query<{
    conversion_id: string;
    conversion_type: string;
    gclid: string;
    outcome: UploadItem["outcome"];
    reason: string | null;
  }>(
    `select conversion_id, conversion_type, gclid, outcome, reason from google_ads_items
      where upload_id = $1 order by created_at, conversion_id`,
    [uploadId],
  );
  return {
    ...toUpload(row),
    items: items.map((item) => ({
      conversionId: item.conversion_id,
      conversionType: item.conversion_type,
      gclid: item.gclid,
      outcome: item.outcome,
      reason: item.reason,
    })),
  };
}
