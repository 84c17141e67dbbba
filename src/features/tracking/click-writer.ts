import { createHash } from "node:crypto";
import type { Queryable } from "../../platform/db/index.js";
import { RollupBatch } from "./rollups.js";

/** A click as the redirect saw it; the tracker is still an id or a name to resolve. */
export interface Click {
  id: string;
  tenantId: string;
  at: Date;
  linkId: number;
  accountId: number;
  brandId: number;
  programId: number;
  trafficSourceId: number;
  /** A digits-only `tracker` value: kept only if the tenant has that tracker. */
  trackerId: number | null;
  /** A `tracker` name of 4-50 characters: the tenant's tracker of that name, created if new. */
  trackerName: string | null;
  gclid: string | null;
  fbclid: string | null;
  msclkid: string | null;
  obclid: string | null;
  parameterA: string | null;
  parameterB: string | null;
  externalClickId: string | null;
  utm: Record<string, string> | null;
  userAgent: string | null;
  ip: string | null;
  country: string | null;
  referrer: string | null;
}

const dayOf = (at: Date): string => at.toISOString().slice(0, 10);
const sorted = <T>(values: Iterable<T>): T[] => [...values].sort();

/** Tracker ids for the batch's tracker values: names are created when new, unknown ids dropped. */
async function resolveTrackers(db: Queryable, clicks: Click[], at: Date): Promise<Map<string, number>> {
  const resolved = new Map<string, number>();
  const names = new Map<string, { tenantId: string; name: string }>();
  const ids = new Map<string, { tenantId: string; id: number }>();
  for (const click of clicks) {
    if (click.trackerName !== null) {
      const name = click.trackerName.toLowerCase();
      names.set(`${click.tenantId}|${name}`, { tenantId: click.tenantId, name });
    } else if (click.trackerId !== null) {
      ids.set(`${click.tenantId}#${click.trackerId}`, { tenantId: click.tenantId, id: click.trackerId });
    }
  }
  if (names.size > 0) {
    // Sorted, so two nodes creating the same names lock them in the same order.
    const wanted = sorted(names.keys()).map((k) => names.get(k) as { tenantId: string; name: string });
    const tenants = wanted.map((w) => w.tenantId);
    const lowered = wanted.map((w) => w.name);
    await db.query(
      `insert into trackers (tenant_id, name, created_at, updated_at)
       select t, n, $3, $3 from unnest($1::text[], $2::text[]) as u (t, n)
       on conflict (tenant_id, lower(name)) do nothing`,
      [tenants, lowered, at],
    );
    const rows = await db.query<{ id: string; tenant_id: string; name: string }>(
      `select tr.id, tr.tenant_id, lower(tr.name) as name from trackers tr
       join unnest($1::text[], $2::text[]) as u (t, n) on tr.tenant_id = u.t and lower(tr.name) = u.n`,
      [tenants, lowered],
    );
    for (const row of rows) resolved.set(`${row.tenant_id}|${row.name}`, Number(row.id));
  }
  if (ids.size > 0) {
    const wanted = [...ids.values()];
    const rows = await db.query<{ id: string; tenant_id: string }>(
      `select tr.id, tr.tenant_id from trackers tr
       join unnest($1::text[], $2::bigint[]) as u (t, i) on tr.tenant_id = u.t and tr.id = u.i`,
      [wanted.map((w) => w.tenantId), wanted.map((w) => w.id)],
    );
    for (const row of rows) resolved.set(`${row.tenant_id}#${row.id}`, Number(row.id));
  }
  return resolved;
}

function trackerKey(click: Click): string | null {
  if (click.trackerName !== null) return `${click.tenantId}|${click.trackerName.toLowerCase()}`;
  if (click.trackerId !== null) return `${click.tenantId}#${click.trackerId}`;
  return null;
}

function visitorKey(click: Click): string {
  const visitor = createHash("sha256")
    .update(`${click.ip ?? ""}\n${click.userAgent ?? ""}`)
    .digest("base64url")
    .slice(0, 22);
  return `${dayOf(click.at)}|${click.linkId}|${click.trafficSourceId}|${visitor}`;
}

/** Which clicks are the first of their visitor on that link, source and day, on any node. */
async function firstVisits(db: Queryable, clicks: Click[]): Promise<Set<string>> {
  const keys = new Map<string, string>();
  for (const click of clicks) {
    const key = visitorKey(click);
    if (!keys.has(key)) keys.set(key, click.id);
  }
  const parts = sorted(keys.keys()).map((k) => k.split("|"));
  const rows = await db.query<{ key: string }>(
    `insert into click_visitors (day, link_id, traffic_source_id, visitor)
     select * from unnest($1::date[], $2::bigint[], $3::bigint[], $4::text[])
     on conflict do nothing
     returning to_char(day, 'YYYY-MM-DD') || '|' || link_id || '|' || traffic_source_id || '|' || visitor as key`,
    [parts.map((p) => p[0]), parts.map((p) => p[1]), parts.map((p) => p[2]), parts.map((p) => p[3])],
  );
  return new Set(rows.map((r) => keys.get(r.key) as string));
}

const CLICK_COLUMNS = `id, tenant_id, at, link_id, account_id, brand_id, program_id, traffic_source_id, tracker_id,
  is_unique, gclid, fbclid, msclkid, obclid, parameter_a, parameter_b, external_click_id, utm, user_agent, ip,
  country, referrer`;

/**
 * Writes a batch of clicks and adds them to the daily rollups, in the caller's transaction.
 * Idempotent per click id, so a batch retried after an unknown outcome is not counted twice.
 */
export async function writeClicks(db: Queryable, clicks: Click[], now: Date): Promise<number> {
  if (clicks.length === 0) return 0;
  const trackers = await resolveTrackers(db, clicks, now);
  const unique = await firstVisits(db, clicks);
  const trackerOf = (click: Click): number | null => {
    const key = trackerKey(click);
    return key === null ? null : (trackers.get(key) ?? null);
  };
  const inserted = await db.query<{ id: string }>(
    `insert into clicks (${CLICK_COLUMNS})
     select * from unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[], $6::bigint[],
       $7::bigint[], $8::bigint[], $9::bigint[], $10::boolean[], $11::text[], $12::text[], $13::text[], $14::text[],
       $15::text[], $16::text[], $17::text[], $18::jsonb[], $19::text[], $20::text[], $21::text[], $22::text[])
     on conflict (id) do nothing
     returning id`,
    [
      clicks.map((c) => c.id),
      clicks.map((c) => c.tenantId),
      clicks.map((c) => c.at),
      clicks.map((c) => c.linkId),
      clicks.map((c) => c.accountId),
      clicks.map((c) => c.brandId),
      clicks.map((c) => c.programId),
      clicks.map((c) => c.trafficSourceId),
      clicks.map(trackerOf),
      clicks.map((c) => unique.has(c.id)),
      clicks.map((c) => c.gclid),
      clicks.map((c) => c.fbclid),
      clicks.map((c) => c.msclkid),
      clicks.map((c) => c.obclid),
      clicks.map((c) => c.parameterA),
      clicks.map((c) => c.parameterB),
      clicks.map((c) => c.externalClickId),
      clicks.map((c) => (c.utm === null ? null : JSON.stringify(c.utm))),
      clicks.map((c) => c.userAgent),
      clicks.map((c) => c.ip),
      clicks.map((c) => c.country),
      clicks.map((c) => c.referrer),
    ],
  );
  const written = new Set(inserted.map((r) => r.id));
  const rollups = new RollupBatch();
  for (const click of clicks) {
    if (!written.has(click.id)) continue;
    rollups.add(
      {
        tenantId: click.tenantId,
        day: dayOf(click.at),
        accountId: click.accountId,
        linkId: click.linkId,
        brandId: click.brandId,
        programId: click.programId,
        trafficSourceId: click.trafficSourceId,
        trackerId: trackerOf(click) ?? 0,
        country: click.country ?? "",
      },
      { clicks: 1, uniqueClicks: unique.has(click.id) ? 1 : 0 },
    );
  }
  await rollups.write(db);
  return written.size;
}
