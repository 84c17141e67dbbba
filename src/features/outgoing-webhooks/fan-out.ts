import { type Db, prepared, type Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";
import {
  COMMISSION_TYPES,
  type ConversionRecord,
  type ConversionType,
  isCounted,
  type StatusChange,
} from "../tracking/index.js";
import { type Snapshot, snapshotsOf } from "./snapshot.js";

/** Channel on which workers hear that new delivery events are due. */
const CHANNEL = "webhook_events";

const ANNOUNCE = prepared("webhooks.announce", "select pg_notify($1, $2)");

/**
 * Writes delivery events and wakes every node's workers once the transaction commits (a NOTIFY
 * per tenant of the events), in one statement: it runs in every recording transaction.
 */
const INSERT_EVENTS = prepared(
  "webhooks.insert-events",
  `with written as (
     insert into webhook_events (id, tenant_id, webhook_id, conversion_id, click_id, conversion_type, snapshot, status,
       next_attempt_at, created_at)
     select e.id, e.tenant_id, e.webhook_id, e.conversion_id, e.click_id, e.type, e.snapshot::jsonb, e.status, $1, $1
       from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[], $8::text[], $9::text[])
            as e (id, tenant_id, webhook_id, conversion_id, click_id, type, snapshot, status)
     returning tenant_id
   )
   select pg_notify($10, t.tenant_id) from (select distinct tenant_id from written) t`,
);

const CANDIDATES = prepared(
  "webhooks.candidates",
  `select w.id, w.tenant_id, w.traffic_source_id, w.status, w.conversion_types, w.attribution_sources,
            w.status_changes, (t.entitlements ->> 'clickWebhooks')::boolean as click_webhooks
       from outgoing_webhooks w join tenants t on t.id = w.tenant_id
      where w.tenant_id = any($1::text[]) and w.status <> 'Disabled'
        and (not $2 or coalesce((t.entitlements ->> 'clickWebhooks')::boolean, false))
      order by w.created_at, w.id`,
);

export interface Candidate {
  id: string;
  tenant_id: string;
  traffic_source_id: string | null;
  status: "Enabled" | "Suspended";
  conversion_types: string[];
  attribution_sources: string[];
  status_changes: boolean;
  click_webhooks: boolean | null;
}

/** The webhooks of these tenants that could fire (not Disabled), oldest first. */
export function candidates(tx: Queryable, tenantIds: string[], clickWebhooksOnly = false): Promise<Candidate[]> {
  return tx.query<Candidate>(CANDIDATES, [tenantIds, clickWebhooksOnly]);
}

/**
 * Whether a webhook fires for a conversion: affiliate-level ones for every conversion,
 * source-level ones for their source; then its type and attribution filters.
 */
export function fires(
  webhook: Candidate,
  type: ConversionType,
  trafficSourceId: number | null,
  source: string,
): boolean {
  if (webhook.traffic_source_id !== null && Number(webhook.traffic_source_id) !== trafficSourceId) return false;
  // Commissions are calculated and never fire; Click only where the tenant turned click webhooks on.
  if (COMMISSION_TYPES.has(type)) return false;
  if (type === "Click" && webhook.click_webhooks !== true) return false;
  if (webhook.conversion_types.length > 0 && !webhook.conversion_types.includes(type)) return false;
  return webhook.attribution_sources.length === 0 || webhook.attribution_sources.includes(source);
}

/** One delivery event to write: the webhook, and the conversion (or click) it carries. */
export interface NewEvent {
  tenantId: string;
  webhook: Candidate;
  conversionId: string | null;
  clickId: string | null;
  type: string;
  snapshot: Snapshot;
}

/** Writes delivery events (Suspended webhooks get Paused ones) and wakes the workers, in one statement. */
export async function insertEvents(tx: Queryable, events: NewEvent[], now: Date): Promise<void> {
  if (events.length === 0) return;
  await tx.query(INSERT_EVENTS, [
    now,
    events.map(() => newId("evt")),
    events.map((e) => e.tenantId),
    events.map((e) => e.webhook.id),
    events.map((e) => e.conversionId),
    events.map((e) => e.clickId),
    events.map((e) => e.type),
    events.map((e) => JSON.stringify(e.snapshot)),
    events.map((e) => (e.webhook.status === "Enabled" ? "Queued" : "Paused")),
    CHANNEL,
  ]);
}

/**
 * Writes one delivery event per conversion and matching webhook, in the transaction that
 * records the conversions (both affiliate-level and source-level when both match). Disabled
 * webhooks create nothing; Suspended ones create Paused events. A conversion recorded as rejected
 * or reversed goes only to the webhooks that take status changes. Set-based: the webhooks, the
 * snapshots and the events take one statement each for the whole batch. Returns the number of
 * events written.
 */
export function fanOut(
  tx: Queryable,
  tenantId: string,
  conversions: readonly ConversionRecord[],
  now: Date,
): Promise<number> {
  return writeDeliveries(tx, tenantId, conversions, now, (webhook, conversion) =>
    webhook.status_changes ? true : isCounted(conversion.status),
  );
}

/**
 * Writes one more delivery of each changed conversion, with its new status, to every webhook
 * that takes status changes and whose filters let the conversion through: in the transaction
 * that changes the statuses. A webhook without statusChanges hears nothing (a receiver that does
 * not know statuses must not count a deposit twice).
 */
export function fanOutStatusChanges(
  tx: Queryable,
  tenantId: string,
  changes: readonly StatusChange[],
  now: Date,
): Promise<number> {
  return writeDeliveries(
    tx,
    tenantId,
    changes.map((c) => c.conversion),
    now,
    (webhook) => webhook.status_changes,
  );
}

async function writeDeliveries(
  tx: Queryable,
  tenantId: string,
  conversions: readonly ConversionRecord[],
  now: Date,
  takes: (webhook: Candidate, conversion: ConversionRecord) => boolean,
): Promise<number> {
  const firable = conversions.filter((conversion) => !COMMISSION_TYPES.has(conversion.type));
  if (firable.length === 0) return 0;
  const webhooks = await candidates(tx, [tenantId]);
  if (webhooks.length === 0) return 0;
  const firing = firable.flatMap((conversion) =>
    webhooks
      .filter(
        (w) =>
          takes(w, conversion) && fires(w, conversion.type, conversion.trafficSourceId, conversion.attributionSource),
      )
      .map((webhook) => ({ conversion, webhook })),
  );
  if (firing.length === 0) return 0;
  // Each delivery carries its own record's status: a conversion changed twice in a batch is sent with each.
  const snapshots = await snapshotsOf(tx, tenantId, [...new Set(firing.map((f) => f.conversion))]);
  await insertEvents(
    tx,
    firing.map(({ conversion, webhook }) => {
      const snapshot = snapshots.get(conversion.id);
      if (snapshot === undefined) throw new Error(`no snapshot for conversion ${conversion.id}`);
      return {
        tenantId,
        webhook,
        conversionId: conversion.id,
        clickId: conversion.clickId,
        type: conversion.type,
        snapshot: { ...snapshot, conversionStatus: conversion.status },
      };
    }),
    now,
  );
  return firing.length;
}

/** Wakes every node's workers once the caller's transaction commits: they claim due events at once. */
export async function announceEvents(tx: Queryable, tenantId: string): Promise<void> {
  await tx.query(ANNOUNCE, [CHANNEL, tenantId]);
}

/** Calls `onEvents` whenever any node records new delivery events. */
export function listenForEvents(db: Db, onEvents: () => void): Promise<() => Promise<void>> {
  return db.listen(CHANNEL, onEvents);
}
