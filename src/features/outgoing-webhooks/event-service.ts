import type { Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";

export const EVENT_STATUSES = ["Queued", "Retrying", "Delivered", "Failed", "Cancelled", "Held", "Paused"] as const;
export type EventStatus = (typeof EVENT_STATUSES)[number];

export interface DeliveryEvent {
  id: string;
  webhookId: string;
  conversionId: string | null;
  clickId: string | null;
  conversionType: string;
  /** The conversion's status this delivery carries (null on a Click delivery). */
  conversionStatus: string | null;
  status: EventStatus;
  attempts: number;
  lastAttemptAt: string | null;
  nextAttemptAt: string | null;
  createdAt: string;
  simulated: boolean;
}

interface EventRow {
  id: string;
  webhook_id: string;
  conversion_id: string | null;
  click_id: string | null;
  conversion_type: string;
  conversion_status: string | null;
  status: EventStatus;
  attempts: number;
  last_attempt_at: Date | null;
  next_attempt_at: Date | null;
  created_at: Date;
  simulated: boolean;
}

const iso = (at: Date | null): string | null => (at === null ? null : new Date(at).toISOString());

function toEvent(row: EventRow): DeliveryEvent {
  return {
    id: row.id,
    webhookId: row.webhook_id,
    conversionId: row.conversion_id,
    clickId: row.click_id,
    conversionType: row.conversion_type,
    conversionStatus: row.conversion_status,
    status: row.status,
    attempts: row.attempts,
    lastAttemptAt: iso(row.last_attempt_at),
    // Only an event waiting to be tried has a next attempt (a Held one: its next allowance check).
    nextAttemptAt:
      row.status === "Queued" || row.status === "Retrying" || row.status === "Held" ? iso(row.next_attempt_at) : null,
    createdAt: new Date(row.created_at).toISOString(),
    simulated: row.simulated,
  };
}

// A delivery queued before statuses existed carried an approved conversion (every one was).
const COLUMNS = `e.id, e.webhook_id, e.conversion_id, e.click_id, e.conversion_type,
  coalesce(e.snapshot ->> 'conversionStatus', case when e.conversion_id is not null then 'approved' end)
    as conversion_status,
  e.status, e.attempts, e.last_attempt_at, e.next_attempt_at, e.created_at, e.simulated`;

export interface EventFilter {
  offset: number;
  limit: number;
  webhookId?: string | undefined;
  clickId?: string | undefined;
  conversionId?: string | undefined;
  status?: EventStatus | undefined;
  from?: Date | undefined;
  to?: Date | undefined;
}

/** Newest first; the date range applies to when the event was created. */
export async function listEvents(
  db: Queryable,
  tenantId: string,
  filter: EventFilter,
): Promise<{ items: DeliveryEvent[]; total: number }> {
  const where = new Conditions("e.tenant_id = $1", tenantId)
    .add("e.webhook_id = $", filter.webhookId)
    .add("e.click_id = $", filter.clickId)
    .add("e.conversion_id = $", filter.conversionId)
    .add("e.status = $", filter.status)
    .add("e.created_at >= $", filter.from)
    .add("e.created_at <= $", filter.to);
  const { rows, total } = await selectPage<EventRow>(
    db,
    {
      select: COLUMNS,
      from: "webhook_events e",
      where: where.sql,
      params: where.params,
      orderBy: "e.created_at desc, e.id desc",
    },
    filter,
  );
  return { items: rows.map(toEvent), total };
}

export async function getEvent(db: Queryable, tenantId: string, id: string): Promise<DeliveryEvent | null> {
  const [row] = await db.query<EventRow>(
    `select ${COLUMNS} from webhook_events e where e.tenant_id = $1 and e.id = $2`,
    [tenantId, id],
  );
  return row ? toEvent(row) : null;
}

export interface Attempt {
  id: string;
  attempt: number;
  at: string;
  urlTemplate: string;
  method: string;
  request: { headers: Record<string, string>; body: string | null };
  response: { status: number; headers: Record<string, string>; body: string } | null;
  durationMs: number;
  errorType: string | null;
  error: string | null;
}

interface AttemptRow {
  id: string;
  attempt: number;
  at: Date;
  url_template: string;
  method: string;
  request: Attempt["request"];
  response: Attempt["response"];
  duration_ms: number;
  error_type: string | null;
  error: string | null;
}

/** One page of an event's attempts, oldest first. */
export function listAttempts(
  db: Queryable,
  tenantId: string,
  eventId: string,
  page: { offset: number; limit: number },
): Promise<{ items: Attempt[]; total: number }> {
  return attemptsPage(db, { table: "webhook_attempts", owner: "event_id" }, tenantId, eventId, page);
}

/**
 * One page of the attempts of one delivery, oldest first, from an attempt log with the columns of
 * webhook_attempts (traffic-source postbacks keep theirs alike), `owner` naming the delivery.
 */
export async function attemptsPage(
  db: Queryable,
  log: { table: "webhook_attempts" | "source_postback_attempts"; owner: "event_id" | "postback_id" },
  tenantId: string,
  ownerId: string,
  page: { offset: number; limit: number },
): Promise<{ items: Attempt[]; total: number }> {
  const where = new Conditions("a.tenant_id = $1", tenantId).add(`a.${log.owner} = $`, ownerId);
  const { rows, total } = await selectPage<AttemptRow>(
    db,
    {
      select: "a.*",
      from: `${log.table} a`,
      where: where.sql,
      params: where.params,
      orderBy: "a.attempt, a.at, a.id",
    },
    page,
  );
  const items = rows.map((row) => ({
    id: row.id,
    attempt: row.attempt,
    at: new Date(row.at).toISOString(),
    urlTemplate: row.url_template,
    method: row.method,
    request: row.request,
    response: row.response,
    durationMs: row.duration_ms,
    errorType: row.error_type,
    error: row.error,
  }));
  return { items, total };
}
