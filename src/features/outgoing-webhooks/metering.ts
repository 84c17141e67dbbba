import type { Db, Queryable } from "../../platform/db/index.js";
import { closeIssue, raiseIssue } from "../issues/index.js";
import { type ClaimedEvent, release } from "./delivery.js";
import { announceEvents } from "./fan-out.js";

/** Sending continues until the month's usage passes 110% of the allowance (11/10, in whole numbers). */
const TOLERANCE_TENTHS = 11;

/** The count below which events are still sent: 110% of the allowance, rounded up; null when unlimited. */
function sendingLimit(allowance: number | null): number | null {
  return allowance === null ? null : Math.ceil((allowance * TOLERANCE_TENTHS) / 10);
}
/** Held events are checked again this often ("every couple of hours"). */
export const HOLD_RECHECK_MS = 2 * 3_600_000;

interface Usage {
  sent: number;
  allowance: number | null;
  tenant_name: string;
}

/** The first day of the UTC calendar month `at` falls in. */
function monthOf(at: Date): string {
  return `${at.toISOString().slice(0, 7)}-01`;
}

/**
 * Counts a tenant's events against its monthly allowance and returns the ones that may be sent.
 * An event counts once, at its first attempt; retries, resends and simulated events are free.
 * An event is sent while the month's count is below 110% of the allowance; the rest are Held and
 * checked again in a couple of hours, and 'webhook_allowance_exceeded' is raised. The tenant's
 * usage row is locked while counting, so workers side by side cannot overshoot together.
 */
async function admitTenant(
  tx: Queryable,
  tenantId: string,
  events: ClaimedEvent[],
  token: string,
  now: Date,
): Promise<ClaimedEvent[]> {
  const month = monthOf(now);
  await tx.query("insert into webhook_usage (tenant_id, month, sent) values ($1, $2, 0) on conflict do nothing", [
    tenantId,
    month,
  ]);
  const [usage] = await tx.query<Usage>(
    `select u.sent, t.webhook_allowance as allowance, t.name as tenant_name
       from webhook_usage u join tenants t on t.id = u.tenant_id
      where u.tenant_id = $1 and u.month = $2 for update of u`,
    [tenantId, month],
  );
  if (!usage) return [];
  const allowance = usage.allowance === null ? null : Number(usage.allowance);
  const limit = sendingLimit(allowance);
  const room = limit === null ? events.length : Math.max(0, limit - Number(usage.sent));
  const admitted = events.slice(0, room);
  const held = events.slice(room);
  if (admitted.length > 0) {
    const counted = await tx.query<{ id: string }>(
      "update webhook_events set counted = true where id = any($1::text[]) and lease_token = $2 returning id",
      [admitted.map((e) => e.id), token],
    );
    await tx.query("update webhook_usage set sent = sent + $3 where tenant_id = $1 and month = $2", [
      tenantId,
      month,
      counted.length,
    ]);
  }
  const subject = { type: "tenant", id: tenantId, name: usage.tenant_name };
  const key = { tenantId, kind: "webhook_allowance_exceeded" as const, subject };
  if (held.length > 0) {
    await release(
      tx,
      held.map((e) => e.id),
      token,
      "Held",
      new Date(now.getTime() + HOLD_RECHECK_MS),
    );
    await raiseIssue(
      tx,
      {
        ...key,
        severity: "error",
        title: "Webhook allowance exceeded: deliveries are held",
        details: {
          month: month.slice(0, 7),
          allowance,
          sent: Number(usage.sent) + admitted.length,
          heldUntilAllowed: `Held deliveries are checked again every ${HOLD_RECHECK_MS / 3_600_000} hours`,
        },
      },
      now,
    );
  } else if (events.some((e) => e.status === "Held")) {
    await closeIssue(tx, key, "Held deliveries are being sent again", now);
  }
  return admitted;
}

/** Splits a claimed batch into the events that may be sent now and those metering holds back. */
export async function admit(db: Db, events: ClaimedEvent[], token: string, now: Date): Promise<ClaimedEvent[]> {
  const free: ClaimedEvent[] = [];
  const byTenant = new Map<string, ClaimedEvent[]>();
  for (const event of events) {
    if (event.simulated || event.counted) free.push(event);
    else byTenant.set(event.tenant_id, [...(byTenant.get(event.tenant_id) ?? []), event]);
  }
  for (const [tenantId, metered] of byTenant) {
    free.push(...(await db.transaction((tx) => admitTenant(tx, tenantId, metered, token, now))));
  }
  return free;
}

/** Held events of the tenant are checked again now (its allowance was changed). */
export async function recheckHeldEvents(tx: Queryable, tenantId: string, now: Date): Promise<void> {
  const rows = await tx.query(
    "update webhook_events set next_attempt_at = $2 where tenant_id = $1 and status = 'Held' returning 1",
    [tenantId, now],
  );
  if (rows.length > 0) await announceEvents(tx, tenantId);
}

export interface WebhookUsage {
  month: string;
  sent: number;
  allowance: number | null;
  /** Sending stops at this count (110% of the allowance); null when unlimited. */
  sendingLimit: number | null;
  held: number;
}

/** A tenant's deliveries counted in a calendar month (UTC, `YYYY-MM`), and its events held now. */
export async function webhookUsage(db: Queryable, tenantId: string, month: string): Promise<WebhookUsage | null> {
  const [row] = await db.query<{ allowance: number | null; sent: number; held: number }>(
    `select t.webhook_allowance as allowance,
            coalesce((select sent from webhook_usage where tenant_id = t.id and month = $2::date), 0)::int as sent,
            (select count(*) from webhook_events where tenant_id = t.id and status = 'Held')::int as held
       from tenants t where t.id = $1`,
    [tenantId, `${month}-01`],
  );
  if (!row) return null;
  const allowance = row.allowance === null ? null : Number(row.allowance);
  return {
    month,
    sent: row.sent,
    allowance,
    sendingLimit: sendingLimit(allowance),
    held: row.held,
  };
}
