import { createHash } from "node:crypto";
import type { Queryable } from "../../platform/db/index.js";
import { coarseRollupCtes } from "./rollups.js";

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

/**
 * Tracker ids for the batch's tracker values: names are created when new, unknown ids dropped.
 * Names are lower-cased by the database, as its unique index compares them, never in JavaScript,
 * whose lower case can be longer than the name (U+0130 becomes two characters): a name that
 * passed the 4-50 rule must still fit the table, or the whole batch would fail.
 */
async function resolveTrackers(db: Queryable, clicks: Click[], at: Date): Promise<Map<string, number>> {
  const resolved = new Map<string, number>();
  const names = new Map<string, { tenantId: string; name: string }>();
  const ids = new Map<string, { tenantId: string; id: number }>();
  for (const click of clicks) {
    if (click.trackerName !== null) {
      names.set(`${click.tenantId}|${click.trackerName}`, { tenantId: click.tenantId, name: click.trackerName });
    } else if (click.trackerId !== null) {
      ids.set(`${click.tenantId}#${click.trackerId}`, { tenantId: click.tenantId, id: click.trackerId });
    }
  }
  if (names.size > 0) {
    const wanted = [...names.values()];
    const tenants = wanted.map((w) => w.tenantId);
    const given = wanted.map((w) => w.name);
    // In order of the lower-cased names, so two nodes creating the same names lock them alike.
    await db.query(
      `insert into trackers (tenant_id, name, created_at, updated_at)
       select distinct t, lower(n), $3::timestamptz, $3::timestamptz from unnest($1::text[], $2::text[]) as u (t, n)
       order by 1, 2
       on conflict (tenant_id, lower(name)) do nothing`,
      [tenants, given, at],
    );
    const rows = await db.query<{ id: string; tenant_id: string; name: string }>(
      `select tr.id, u.t as tenant_id, u.n as name from trackers tr
       join unnest($1::text[], $2::text[]) as u (t, n) on tr.tenant_id = u.t and lower(tr.name) = lower(u.n)`,
      [tenants, given],
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
  if (click.trackerName !== null) return `${click.tenantId}|${click.trackerName}`;
  if (click.trackerId !== null) return `${click.tenantId}#${click.trackerId}`;
  return null;
}

// User agents repeat a lot: digest each once. Bounded, and cleared when full.
const agentDigests = new Map<string, string>();
const MAX_AGENT_DIGESTS = 10_000;

/** Who the visitor is, for unique clicks: their IP and a digest of their user agent. */
function visitorOf(click: Click): string {
  const agent = click.userAgent ?? "";
  let digest = agentDigests.get(agent);
  if (digest === undefined) {
    digest = createHash("sha1").update(agent).digest("base64url").slice(0, 16);
    if (agentDigests.size >= MAX_AGENT_DIGESTS) agentDigests.clear();
    agentDigests.set(agent, digest);
  }
  return `${click.ip ?? ""}|${digest}`;
}

/*
 * One statement for the whole batch, so the database does the per-row work and the node only
 * serializes one JSON parameter:
 *   firsts   the batch's new (day, link, source, visitor) keys: those visitors' first clicks are unique;
 *   written  the clicks, idempotent per id, so a batch retried after an unknown outcome is not
 *            counted twice (the visitors and rollups of a written batch were committed with it);
 *   rollups  each day's totals, grouped and in key order, so that two nodes lock shared rows
 *            in the same order and cannot deadlock; then the coarser rollups the reports read,
 *            one table after the other, each in key order too (coarseRollupCtes).
 */
const WRITE_CLICKS = `
with input as (
  select x.*, (x.at at time zone 'UTC')::date as day
  from json_to_recordset($1::json) as x(
    ord int, id text, tenant_id text, at timestamptz, link_id bigint, account_id bigint, brand_id bigint,
    program_id bigint, traffic_source_id bigint, tracker_id bigint, visitor text, gclid text, fbclid text,
    msclkid text, obclid text, parameter_a text, parameter_b text, external_click_id text, utm jsonb,
    user_agent text, ip text, country text, referrer text)
),
firsts as (
  insert into click_visitors (day, link_id, traffic_source_id, visitor)
  select distinct day, link_id, traffic_source_id, visitor from input order by 1, 2, 3, 4
  on conflict do nothing
  returning day, link_id, traffic_source_id, visitor
),
marked as (
  select i.*,
    f.visitor is not null
      and row_number() over (partition by i.day, i.link_id, i.traffic_source_id, i.visitor order by i.ord) = 1
      as is_unique
  from input i
  left join firsts f on f.day = i.day and f.link_id = i.link_id and f.traffic_source_id = i.traffic_source_id
    and f.visitor = i.visitor
),
written as (
  insert into clicks (id, tenant_id, at, link_id, account_id, brand_id, program_id, traffic_source_id, tracker_id,
    is_unique, gclid, fbclid, msclkid, obclid, parameter_a, parameter_b, external_click_id, utm, user_agent, ip,
    country, referrer)
  select id, tenant_id, at, link_id, account_id, brand_id, program_id, traffic_source_id, tracker_id,
    is_unique, gclid, fbclid, msclkid, obclid, parameter_a, parameter_b, external_click_id, utm, user_agent, ip,
    country, referrer
  from marked
  on conflict (id) do nothing
  returning tenant_id, at, account_id, link_id, brand_id, program_id, traffic_source_id, tracker_id, country, is_unique
),
clicked as (
  select tenant_id, (at at time zone 'UTC')::date as day, account_id, link_id, brand_id, program_id, traffic_source_id,
    coalesce(tracker_id, 0) as tracker_id, coalesce(country, '') as country, count(*) as clicks,
    count(*) filter (where is_unique) as unique_clicks
  from written
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9
),
rollups as (
  insert into daily_rollups (tenant_id, day, account_id, link_id, brand_id, program_id, traffic_source_id,
    tracker_id, country, clicks, unique_clicks)
  select * from clicked
  order by 1, 2, 3, 4, 5, 6, 7, 8, 9
  on conflict (tenant_id, day, account_id, link_id, brand_id, program_id, traffic_source_id, tracker_id, country)
  do update set clicks = daily_rollups.clicks + excluded.clicks,
    unique_clicks = daily_rollups.unique_clicks + excluded.unique_clicks
  returning 1
),
${coarseRollupCtes("clicked", ["clicks", "unique_clicks"], "rollups")}
select count(*)::int as written from written`;

/**
 * Writes a batch of clicks, decides their unique visitors and adds them to the rollups.
 * Atomic on its own (one statement after the trackers, whose creation is idempotent).
 */
export async function writeClicks(db: Queryable, clicks: Click[], now: Date): Promise<number> {
  if (clicks.length === 0) return 0;
  const trackers = await resolveTrackers(db, clicks, now);
  const rows = clicks.map((click, ord) => {
    const tracker = trackerKey(click);
    return {
      ord,
      id: click.id,
      tenant_id: click.tenantId,
      at: click.at.toISOString(),
      link_id: click.linkId,
      account_id: click.accountId,
      brand_id: click.brandId,
      program_id: click.programId,
      traffic_source_id: click.trafficSourceId,
      tracker_id: tracker === null ? null : (trackers.get(tracker) ?? null),
      visitor: visitorOf(click),
      gclid: click.gclid,
      fbclid: click.fbclid,
      msclkid: click.msclkid,
      obclid: click.obclid,
      parameter_a: click.parameterA,
      parameter_b: click.parameterB,
      external_click_id: click.externalClickId,
      utm: click.utm,
      user_agent: click.userAgent,
      ip: click.ip,
      country: click.country,
      referrer: click.referrer,
    };
  });
  const [result] = await db.query<{ written: number }>(WRITE_CLICKS, [JSON.stringify(rows)]);
  return result?.written ?? 0;
}
