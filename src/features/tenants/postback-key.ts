import { randomSecret, sha256Hex } from "../../platform/crypto.js";
import type { Queryable } from "../../platform/db/index.js";
import { HOUR_MS } from "../../platform/durations.js";
import { type Actor, recordAudit } from "../audit/index.js";

/** The longest grace period a rotation may give the replaced key: a week, to move every program over. */
export const MAX_POSTBACK_KEY_GRACE_HOURS = 168;

export function newPostbackKey(): string {
  return randomSecret()
    .replace(/[+/=_-]/g, "")
    .slice(0, 32);
}

/** The rotation's outcome: the new key (shown once) and until when the replaced one still works. */
export interface RotatedPostbackKey {
  postbackKey: string;
  /** Null: the replaced key stopped at once. */
  previousKeyValidUntil: Date | null;
}

/**
 * Replaces the tenant's postback key. With `graceHours` above 0 the replaced key keeps working
 * until now plus that many hours, so programs can be moved to the new URL one by one; a key
 * still in an earlier grace period stops at once (only the key just replaced gets one).
 */
export async function rotatePostbackKey(
  db: Queryable,
  tenantId: string,
  actor: Actor,
  at: Date,
  graceHours = 0,
): Promise<RotatedPostbackKey> {
  const postbackKey = newPostbackKey();
  const until = graceHours > 0 ? new Date(at.getTime() + graceHours * HOUR_MS) : null;
  await db.query(
    `update tenants set
       previous_postback_key_hash = case when $4::timestamptz is null then null else postback_key_hash end,
       previous_postback_key_until = $4::timestamptz,
       postback_key_hash = $2, updated_at = $3
     where id = $1`,
    [tenantId, sha256Hex(postbackKey), at, until],
  );
  await recordAudit(db, {
    tenantId,
    actor,
    action: "tenant.postback_key_rotated",
    subject: { type: "tenant", id: tenantId },
    details: { graceHours, previousKeyValidUntil: until?.toISOString() ?? null },
    at,
  });
  return { postbackKey, previousKeyValidUntil: until };
}

/** Until when the replaced key still works, or null when none does any more. */
export async function previousPostbackKeyUntil(db: Queryable, tenantId: string, now: Date): Promise<Date | null> {
  const [row] = await db.query<{ until: Date | null }>(
    `select previous_postback_key_until as until from tenants
      where id = $1 and previous_postback_key_hash is not null and previous_postback_key_until > $2`,
    [tenantId, now],
  );
  return row?.until ? new Date(row.until) : null;
}

/** Ends the replaced key's grace period now. False when no replaced key was still working. */
export async function endPreviousPostbackKey(
  db: Queryable,
  tenantId: string,
  actor: Actor,
  at: Date,
): Promise<boolean> {
  const ended = await db.query<{ id: string }>(
    `update tenants set previous_postback_key_hash = null, previous_postback_key_until = null, updated_at = $2
      where id = $1 and previous_postback_key_hash is not null and previous_postback_key_until > $2
      returning id`,
    [tenantId, at],
  );
  if (ended.length === 0) return false;
  await recordAudit(db, {
    tenantId,
    actor,
    action: "tenant.previous_postback_key_ended",
    subject: { type: "tenant", id: tenantId },
    at,
  });
  return true;
}

/**
 * The tenant a postback key belongs to: its current key, or the key it replaced while that one's
 * grace period runs (until `now`, exclusive). Null for any other key. Each on its own index.
 */
export async function tenantOfPostbackKey(db: Queryable, key: string, now: Date): Promise<string | null> {
  const hash = sha256Hex(key);
  const [tenant] = await db.query<{ id: string }>(
    `select id from tenants where postback_key_hash = $1
     union all
     select id from tenants where previous_postback_key_hash = $1 and previous_postback_key_until > $2
     limit 1`,
    [hash, now],
  );
  return tenant?.id ?? null;
}
