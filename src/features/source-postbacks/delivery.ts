import { randomUUID } from "node:crypto";
import type { Db, Queryable } from "../../platform/db/index.js";
import { type FairShare, type FairTable, fairDueIds, unlimitedShare } from "../../platform/fair-claimer.js";
import { newId } from "../../platform/ids.js";
import { type SendResult, send } from "../../platform/webhook-sender.js";
import {
  type DeliverySettings,
  nextAttempt,
  placeholderValues,
  renderUrl,
  type Snapshot,
} from "../outgoing-webhooks/index.js";
import type { Postback } from "./schemas.js";
import { POSTBACK_VOCABULARY } from "./settings.js";

/** A claimed postback with its source's postback settings as they stand now (null: removed). */
export interface ClaimedPostback {
  id: string;
  tenant_id: string;
  /** The destination this worker counts its attempts under way by. */
  traffic_source_id: string;
  snapshot: Snapshot;
  external_id: string;
  payout: string | number | null;
  attempts: number;
  created_at: Date;
  postback: Postback | null;
}

/** The due postbacks, as the fair claim reads them: per tenant, and per traffic source as the destination. */
const DUE_POSTBACKS: FairTable = {
  table: "source_postbacks",
  due: "status in ('Queued', 'Retrying') and next_attempt_at <= $1 and (lease_until is null or lease_until < $1)",
  tenant: "tenant_id",
  destination: "traffic_source_id::text",
  order: "next_attempt_at",
};

/**
 * Claims up to `limit` due postbacks with a lease in one statement, as the webhook worker claims
 * its events: SKIP LOCKED lets several workers claim side by side, a postback whose lease ran
 * out (its worker died) is due again, and `share` passes over the postbacks of tenants and
 * sources that already have their cap of attempts under way on this worker.
 */
export async function claimDue(
  db: Db,
  now: Date,
  limit: number,
  leaseMs: number,
  share: FairShare = unlimitedShare(limit),
): Promise<{ token: string; postbacks: ClaimedPostback[] }> {
  const token = randomUUID();
  const params: unknown[] = [now, new Date(now.getTime() + leaseMs), token];
  const ids = fairDueIds(DUE_POSTBACKS, share, limit, params);
  const postbacks = await db.query<ClaimedPostback>(
    `update source_postbacks p set lease_until = $2, lease_token = $3
       from (${ids}) due, traffic_sources s
      where p.id = due.id and s.id = p.traffic_source_id
      returning p.id, p.tenant_id, p.traffic_source_id::text as traffic_source_id, p.snapshot, p.external_id,
                p.payout, p.attempts, p.created_at, s.postback`,
    params,
  );
  return { token, postbacks };
}

/** Postbacks of a source whose postback was disabled or removed wait Paused until it is enabled again. */
export async function pause(db: Queryable, ids: string[], token: string): Promise<void> {
  if (ids.length === 0) return;
  await db.query(
    `update source_postbacks set status = 'Paused', next_attempt_at = null, lease_until = null, lease_token = null
      where id = any($1::text[]) and lease_token = $2`,
    [ids, token],
  );
}

/** The URL of one attempt: the source's current template with the values fixed when it was queued. */
export function urlOf(postback: ClaimedPostback & { postback: Postback }) {
  const payout = postback.payout === null ? null : String(Number(postback.payout));
  const values = {
    ...placeholderValues(postback.snapshot, postback.snapshot.eventName),
    externalId: postback.external_id,
    payout,
  };
  return renderUrl(postback.postback.url, values, POSTBACK_VOCABULARY);
}

/** One attempt made, not yet written. */
export interface Outcome {
  postback: ClaimedPostback & { postback: Postback };
  token: string;
  attempt: number;
  at: Date;
  result: SendResult;
  status: "Delivered" | "Retrying" | "Failed";
  next: Date | null;
}

/** Sends one claimed postback (a GET, as networks take them); writes nothing. */
export async function attempt(
  postback: ClaimedPostback & { postback: Postback },
  token: string,
  settings: DeliverySettings,
  now: () => Date,
): Promise<Outcome> {
  const { url, steered } = urlOf(postback);
  const at = now();
  const number = postback.attempts + 1;
  if (steered !== null) {
    // A click value (visitor input) would steer it: not sent, and trying again would render the
    // same values, so it fails at once (a resend after fixing the template tries again).
    const result: SendResult = {
      ok: false,
      response: null,
      errorType: steered.errorType,
      error: steered.message,
      durationMs: 0,
    };
    return { postback, token, attempt: number, at, result, status: "Failed", next: null };
  }
  const result = await send(url, "GET", null, { timeoutMs: settings.timeoutMs, policy: settings.policy });
  const next = result.ok ? null : nextAttempt(postback, number, now(), settings.retryIntervalMs);
  const status = result.ok ? "Delivered" : next === null ? "Failed" : "Retrying";
  return { postback, token, attempt: number, at, result, status, next };
}

const iso = (date: Date | null) => (date === null ? null : date.toISOString());

/**
 * Writes a batch of outcomes in one transaction: every attempt is logged, and a postback's new
 * status is written only while the worker still holds its lease.
 */
export async function recordOutcomes(db: Db, outcomes: Outcome[]): Promise<void> {
  if (outcomes.length === 0) return;
  await db.transaction(async (tx) => {
    await tx.query(
      `insert into source_postback_attempts (id, postback_id, tenant_id, attempt, at, url_template, method, request,
         response, duration_ms, error_type, error)
       select a.id, a.postback_id, a.tenant_id, a.attempt, a.at, a.url_template, 'GET',
              '{"headers": {}, "body": null}'::jsonb, a.response::jsonb, a.duration_ms, a.error_type, a.error
         from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::text[], $7::text[],
                     $8::int[], $9::text[], $10::text[])
              as a (id, postback_id, tenant_id, attempt, at, url_template, response, duration_ms, error_type, error)
        -- A postback deleted (with its source) while its attempt was under way leaves nothing behind.
        where exists (select 1 from source_postbacks p where p.id = a.postback_id)`,
      [
        outcomes.map(() => newId("att")),
        outcomes.map((o) => o.postback.id),
        outcomes.map((o) => o.postback.tenant_id),
        outcomes.map((o) => o.attempt),
        outcomes.map((o) => iso(o.at)),
        outcomes.map((o) => o.postback.postback.url),
        outcomes.map((o) => (o.result.response === null ? null : JSON.stringify(o.result.response))),
        outcomes.map((o) => o.result.durationMs),
        outcomes.map((o) => o.result.errorType),
        outcomes.map((o) => o.result.error),
      ],
    );
    await tx.query(
      `update source_postbacks p set status = u.status, attempts = u.attempt, last_attempt_at = u.at,
              next_attempt_at = u.next, lease_until = null, lease_token = null
         from unnest($1::text[], $2::text[], $3::text[], $4::int[], $5::timestamptz[], $6::timestamptz[])
              as u (id, token, status, attempt, at, next)
        where p.id = u.id and p.lease_token = u.token`,
      [
        outcomes.map((o) => o.postback.id),
        outcomes.map((o) => o.token),
        outcomes.map((o) => o.status),
        outcomes.map((o) => o.attempt),
        outcomes.map((o) => iso(o.at)),
        outcomes.map((o) => iso(o.next)),
      ],
    );
  });
}
