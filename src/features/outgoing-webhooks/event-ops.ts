import type { Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import { newId } from "../../platform/ids.js";
import type { ConversionType } from "../tracking/index.js";
import { announceEvents } from "./fan-out.js";
import { SAMPLE_VALUES } from "./placeholders.js";
import type { Snapshot } from "./snapshot.js";

/** Events still waiting to be sent: the ones a cancel stops. */
const PENDING = ["Queued", "Retrying", "Held", "Paused"];

export interface EventRange {
  webhookId?: string | undefined;
  from: Date;
  to: Date;
}

function rangeWhere(range: EventRange): { where: string; params: unknown[] } {
  const params: unknown[] = [range.from, range.to];
  let where = "created_at between $2 and $3";
  if (range.webhookId !== undefined) {
    params.push(range.webhookId);
    where += ` and webhook_id = $${params.length + 1}`;
  }
  return { where, params };
}

/** A range narrowed to one webhook names one of the tenant's (ids are looked up in the caller's tenant: 404). */
async function checkRangeWebhook(db: Queryable, tenantId: string, range: EventRange): Promise<void> {
  if (range.webhookId === undefined) return;
  const [row] = await db.query("select 1 from outgoing_webhooks where tenant_id = $1 and id = $2", [
    tenantId,
    range.webhookId,
  ]);
  if (!row) throw ApiError.notFound("Webhook", range.webhookId);
}

/** Queues one event for a new attempt now, whatever its status. False when it does not exist. */
export async function resendEvent(db: Queryable, tenantId: string, id: string, now: Date): Promise<boolean> {
  const rows = await db.query(
    `update webhook_events set status = 'Queued', next_attempt_at = $3, lease_until = null, lease_token = null
      where tenant_id = $1 and id = $2 returning 1`,
    [tenantId, id, now],
  );
  if (rows.length > 0) await announceEvents(db, tenantId);
  return rows.length > 0;
}

/** Cancels the range's events that are still waiting; returns how many. */
export async function cancelEvents(db: Queryable, tenantId: string, range: EventRange): Promise<number> {
  await checkRangeWebhook(db, tenantId, range);
  const { where, params } = rangeWhere(range);
  const rows = await db.query(
    `update webhook_events set status = 'Cancelled', next_attempt_at = null, lease_until = null, lease_token = null
      where tenant_id = $1 and ${where} and status = any($${params.length + 2}::text[]) returning 1`,
    [tenantId, ...params, PENDING],
  );
  return rows.length;
}

/** Deletes events (and their attempts); returns how many. */
export async function deleteEvents(
  db: Queryable,
  tenantId: string,
  range: EventRange | { id: string },
): Promise<number> {
  if ("id" in range) {
    const rows = await db.query("delete from webhook_events where tenant_id = $1 and id = $2 returning 1", [
      tenantId,
      range.id,
    ]);
    return rows.length;
  }
  await checkRangeWebhook(db, tenantId, range);
  const { where, params } = rangeWhere(range);
  const rows = await db.query(`delete from webhook_events where tenant_id = $1 and ${where} returning 1`, [
    tenantId,
    ...params,
  ]);
  return rows.length;
}

/**
 * The mark of a simulated delivery: its conversionId, clickId and externalClickId start with it,
 * which no real id does (ours start with `cnv_`/`clk_`), so a receiver can tell a test from a
 * conversion to pay for.
 */
export const SIMULATED_ID_PREFIX = "sim_";

/** A sample conversion with every placeholder filled, the simulate-only ones included. */
function sampleSnapshot(type: ConversionType, now: Date): Snapshot {
  const v = SAMPLE_VALUES;
  const named = (id: string, name: string) => ({ id: Number(id), name });
  return {
    conversionId: `${SIMULATED_ID_PREFIX}${newId("cnv")}`,
    conversionType: type,
    conversionStatus: v.conversionStatus,
    eventName: type,
    eventValue: Number(v.eventValue),
    currency: v.currencyCode,
    eventTime: now.toISOString(),
    attributionSource: v.attributionSource,
    clickId: `${SIMULATED_ID_PREFIX}${v.clickId}`,
    clickDate: new Date(now.getTime() - 30 * 60_000).toISOString(),
    country: v.country,
    clientUserAgent: v.clientUserAgent,
    account: named(v.accountId, v.account),
    brand: named(v.brandId, v.brand),
    program: named(v.programId, v.program),
    trafficSource: named(v.trafficSourceId, v.trafficSource),
    link: named(v.linkId, v.link),
    tracker: named(v.trackerId, v.tracker),
    attribution: {
      gclid: v.gclid,
      fbclid: v.fbclid,
      msclkid: v.msclkid,
      obclid: v.obclid,
      parameterA: v.parameterA,
      parameterB: v.parameterB,
      externalClickId: `${SIMULATED_ID_PREFIX}${v.externalClickId}`,
    },
    pageViews: [
      { url: v.location, title: v.documentTitle, referrer: "https://www.google.com/", at: now.toISOString() },
    ],
    simulate: {
      medium: v.medium,
      campaign: v.campaign,
      term: v.term,
      content: v.content,
      creative: v.creative,
      location: v.location,
      locationPath: v.locationPath,
      documentTitle: v.documentTitle,
    },
  };
}

/** Only an Enabled webhook sends a simulation; any other status is a 409 naming how to enable it. */
export function assertSimulable(status: string, webhookId: string): void {
  if (status !== "Enabled") {
    throw ApiError.conflict(
      `webhook is ${status}; enable it to simulate (PATCH status Enabled; webhook '${webhookId}')`,
    );
  }
}

/**
 * Queues a simulated event for the webhook; its outcome shows in the webhook's delivery log.
 * A Disabled webhook creates no events (docs/outgoing-webhooks.md), simulated ones included: 409. A Suspended one
 * would only hold the event Paused while answering "Request sent": 409 as well, naming how to
 * enable it. The row lock keeps a concurrent PATCH from changing it between the check and the insert.
 */
export async function simulate(
  db: Queryable,
  tenantId: string,
  webhookId: string,
  type: ConversionType,
  now: Date,
): Promise<string> {
  const [hook] = await db.query<{ status: string }>(
    "select status from outgoing_webhooks where tenant_id = $1 and id = $2 for share",
    [tenantId, webhookId],
  );
  if (!hook) throw ApiError.notFound("Webhook", webhookId);
  assertSimulable(hook.status, webhookId);
  const id = newId("evt");
  await db.query(
    `insert into webhook_events (id, tenant_id, webhook_id, conversion_id, click_id, conversion_type, snapshot, status,
       next_attempt_at, simulated, created_at)
     values ($1, $2, $3, null, null, $4, $5, 'Queued', $6, true, $6)`,
    [id, tenantId, webhookId, type, JSON.stringify(sampleSnapshot(type, now)), now],
  );
  await announceEvents(db, tenantId);
  return id;
}
