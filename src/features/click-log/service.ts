import type { Static } from "typebox";
import type { Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import { pageViewsFor } from "../tracking/index.js";
import { maskedAddress } from "./ip-mask.js";
import type { ClickDetail, ClickRecord } from "./schemas.js";

export type ClickLogRecord = Static<typeof ClickRecord>;
export type ClickLogDetail = Static<typeof ClickDetail>;

export interface ClickLogFilter {
  offset: number;
  limit: number;
  linkId?: number | undefined;
  trafficSourceId?: number | undefined;
  trackerId?: number | undefined;
  /** Upper case. */
  country?: string | undefined;
  device?: string | undefined;
  bot?: boolean | undefined;
  clickId?: string | undefined;
  /** Absent with clickId: an exact id needs no window. */
  from?: Date | undefined;
  to?: Date | undefined;
}

interface Row {
  id: string;
  at: Date;
  link_id: string;
  account_id: string;
  brand_id: string;
  program_id: string;
  traffic_source_id: string;
  tracker_id: string | null;
  is_unique: boolean;
  country: string | null;
  device: string | null;
  os: string | null;
  browser: string | null;
  bot_reason: "user_agent" | "data_center" | null;
  ip: string | null;
  user_agent: string | null;
  parameter_a: string | null;
  parameter_b: string | null;
  gclid: string | null;
  fbclid: string | null;
  msclkid: string | null;
  obclid: string | null;
  external_click_id: string | null;
  source_click_id: string | null;
  referrer: string | null;
}

const COLUMNS =
  "c.id, c.at, c.link_id, c.account_id, c.brand_id, c.program_id, c.traffic_source_id, c.tracker_id, c.is_unique, " +
  "c.country, c.device, c.os, c.browser, c.bot_reason, c.ip, c.user_agent, c.parameter_a, c.parameter_b, c.gclid, " +
  "c.fbclid, c.msclkid, c.obclid, c.external_click_id, c.source_click_id, c.referrer";

// Every page view of the click, however it is dated.
const ALL_TIME = new Date("9999-12-31T23:59:59Z");

const idOf = (value: string | null): number | null => (value === null ? null : Number(value));

function toRecord(row: Row): ClickLogRecord {
  return {
    id: row.id,
    at: new Date(row.at).toISOString(),
    linkId: Number(row.link_id),
    accountId: Number(row.account_id),
    brandId: Number(row.brand_id),
    programId: Number(row.program_id),
    trafficSourceId: Number(row.traffic_source_id),
    trackerId: idOf(row.tracker_id),
    unique: row.is_unique,
    country: row.country,
    device: row.device,
    os: row.os,
    browser: row.browser,
    bot: row.bot_reason !== null,
    botReason: row.bot_reason,
    ip: maskedAddress(row.ip),
    userAgent: row.user_agent,
    parameterA: row.parameter_a,
    parameterB: row.parameter_b,
    gclid: row.gclid,
    fbclid: row.fbclid,
    msclkid: row.msclkid,
    obclid: row.obclid,
    externalClickId: row.external_click_id,
    sourceClickId: row.source_click_id,
    referrer: row.referrer,
  };
}

/**
 * A tenant's clicks, newest first, within a window (clickLogWindow bounds it) on the
 * (tenant_id, at) index; the other filters narrow what that window holds.
 */
export async function listClicks(
  db: Queryable,
  tenantId: string,
  filter: ClickLogFilter,
): Promise<{ items: ClickLogRecord[]; total: number }> {
  const where = new Conditions("c.tenant_id = $1", tenantId)
    .add("c.id = $", filter.clickId)
    .add("c.at >= $", filter.from)
    .add("c.at <= $", filter.to)
    .add("c.link_id = $", filter.linkId)
    .add("c.traffic_source_id = $", filter.trafficSourceId)
    .add("c.tracker_id = $", filter.trackerId)
    .add("c.country = $", filter.country)
    .add("c.device = $", filter.device)
    .when(filter.bot === true, "c.bot_reason is not null")
    .when(filter.bot === false, "c.bot_reason is null");
  const { rows, total } = await selectPage<Row>(
    db,
    { select: COLUMNS, from: "clicks c", where: where.sql, params: where.params, orderBy: "c.at desc, c.id desc" },
    filter,
  );
  return { items: rows.map(toRecord), total };
}

/** One click with its page views and the conversions attributed to it; null when the tenant has no such click. */
export async function getClick(db: Queryable, tenantId: string, clickId: string): Promise<ClickLogDetail | null> {
  const [row] = await db.query<Row>(`select ${COLUMNS} from clicks c where c.id = $1 and c.tenant_id = $2`, [
    clickId,
    tenantId,
  ]);
  if (!row) return null;
  const [pageViews, conversions] = await Promise.all([
    pageViewsFor(db, tenantId, clickId, ALL_TIME),
    db.query<{
      id: string;
      type: ClickLogDetail["conversions"][number]["type"];
      status: ClickLogDetail["conversions"][number]["status"];
      occurred_at: Date;
    }>(
      `select id, type, status, occurred_at from conversions
        where click_id = $1 and tenant_id = $2 order by occurred_at, id limit 500`,
      [clickId, tenantId],
    ),
  ]);
  return {
    ...toRecord(row),
    pageViews,
    conversions: conversions.map((c) => ({
      id: c.id,
      type: c.type,
      status: c.status,
      occurredAt: new Date(c.occurred_at).toISOString(),
    })),
  };
}
