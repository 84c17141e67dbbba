import type { Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import type { PostbackLogEntry, PostbackLogOutcome, PostbackVia } from "./entry.js";

/** A line of the log as the API answers it: as written, with its id, its instant as ISO text, and no tenant. */
export type PostbackLogLine = Omit<PostbackLogEntry, "tenantId" | "at"> & { id: string; at: string };

export interface PostbackLogFilter {
  offset: number;
  limit: number;
  outcome?: PostbackLogOutcome[] | undefined;
  /** Lower-cased type names: a refused call's type is kept as it was sent. */
  type?: string[] | undefined;
  clickId?: string | undefined;
  externalId?: string | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

interface Row {
  id: string;
  at: Date;
  via: PostbackVia;
  outcome: PostbackLogOutcome;
  reason: string | null;
  field: string | null;
  conversion_id: string | null;
  click_id: string | null;
  external_id: string | null;
  type: string | null;
  query: Record<string, string> | string;
}

/**
 * A tenant's log, newest first. clickId and externalId are exact matches on their indexes
 * (postback_log_click, postback_log_external); the window applies to when the call arrived.
 */
export async function listPostbackLog(
  db: Queryable,
  tenantId: string,
  filter: PostbackLogFilter,
): Promise<{ items: PostbackLogLine[]; total: number }> {
  const where = new Conditions("l.tenant_id = $1", tenantId)
    .add("l.outcome = any($::text[])", filter.outcome)
    .add("lower(l.type) = any($::text[])", filter.type)
    .add("l.click_id = $", filter.clickId)
    .add("l.external_id = $", filter.externalId)
    .add("l.at >= $", filter.from)
    .add("l.at <= $", filter.to);
  const { rows, total } = await selectPage<Row>(
    db,
    {
      select:
        "l.id, l.at, l.via, l.outcome, l.reason, l.field, l.conversion_id, l.click_id, l.external_id, l.type, l.query",
      from: "postback_log l",
      where: where.sql,
      params: where.params,
      orderBy: "l.at desc, l.id desc",
    },
    filter,
  );
  return {
    items: rows.map((row) => ({
      id: row.id,
      at: row.at.toISOString(),
      via: row.via,
      outcome: row.outcome,
      reason: row.reason,
      field: row.field,
      conversionId: row.conversion_id,
      clickId: row.click_id,
      externalId: row.external_id,
      type: row.type,
      query: typeof row.query === "string" ? (JSON.parse(row.query) as Record<string, string>) : row.query,
    })),
    total,
  };
}
