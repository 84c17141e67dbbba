import { createHash } from "node:crypto";
import type { Queryable } from "../../platform/db/index.js";
import type { BotReason } from "../click-facts/index.js";
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
  /** The value of the traffic source's click-id parameter; absent in clicks spilled before it existed. */
  sourceClickId?: string | null;
  utm: Record<string, string> | null;
  userAgent: string | null;
  ip: string | null;
  country: string | null;
  referrer: string | null;
  /** Device type, OS and browser families (click-facts); absent in clicks spilled before they existed. */
  device?: string | null;
  os?: string | null;
  browser?: string | null;
  /** Set on a bot's click: stored, but counted as bot_clicks only, with no tracker and no click hooks. */
  botReason?: BotReason | null;
}

/** A bot's click: counted apart, never in clicks or unique_clicks. */
export const isBotClick = (click: Click): boolean => (click.botReason ?? null) !== null;

/**
 * Tracker ids for the batch's tracker values: names are created when new, unknown ids dropped.
 * Names are lower-cased by the database, as its unique index compares them, never in JavaScript,
 * whose lower case can be longer than the name (U+0130 becomes two characters): a name that
 * passed the 4-50 rule must still fit the table, or the whole batch would fail.
 */
async function resolveTrackers(
  db: Queryable,
  clicks: Click[],
  at: Date,
  options: WriteClicksOptions,
): Promise<Map<string, number>> {
  const resolved = new Map<string, number>();
  const names = new Map<string, { tenantId: string; name: string }>();
  const ids = new Map<string, { tenantId: string; id: number }>();
  for (const click of clicks) {
    // A bot's click creates no tracker and is written without one (trackerKey).
    if (isBotClick(click)) continue;
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
    const perHour = options.trackersPerTenantPerHour;
    if (perHour === undefined) {
      await db.query(
        `insert into trackers (tenant_id, name, created_at, updated_at)
         select distinct t, lower(n), $3::timestamptz, $3::timestamptz from unnest($1::text[], $2::text[]) as u (t, n)
         order by 1, 2
         on conflict (tenant_id, lower(name)) do nothing`,
        [tenants, given, at],
      );
    } else await db.query(BOUNDED_NEW_TRACKERS, [tenants, given, at, perHour]);
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

/**
 * New tracker names, at most $4 a tenant per hour: a tenant's trackers made in the hour before
 * $3 (by clicks or through the API) are counted from its newest rows backwards, at most $4 of
 * them (the index on tenant and id), so the count costs the same however many trackers the
 * tenant has. Names past the budget are not created, and their clicks are written without a
 * tracker. Two nodes writing at the same moment may each create up to the budget left.
 */
const BOUNDED_NEW_TRACKERS = `
with wanted as (
  select distinct t, lower(n) as n from unnest($1::text[], $2::text[]) as u (t, n)
),
fresh as (
  select w.t, w.n, row_number() over (partition by w.t order by w.n) as rank
  from wanted w
  where not exists (select 1 from trackers tr where tr.tenant_id = w.t and lower(tr.name) = w.n)
),
budget as (
  select f.t, $4::int - (
    select count(*) from (
      select r.created_at from trackers r where r.tenant_id = f.t order by r.id desc limit $4::int
    ) recent where recent.created_at > $3::timestamptz - interval '1 hour'
  ) as remaining
  from (select distinct t from fresh) f
)
insert into trackers (tenant_id, name, created_at, updated_at)
select f.t, f.n, $3::timestamptz, $3::timestamptz from fresh f join budget b on b.t = f.t
where f.rank <= b.remaining
order by 1, 2
on conflict (tenant_id, lower(name)) do nothing`;

export interface WriteClicksOptions {
  /** New trackers a tenant's clicks may create per hour; unset: every new name is created. */
  trackersPerTenantPerHour?: number | undefined;
}

function trackerKey(click: Click): string | null {
  if (isBotClick(click)) return null;
  if (click.trackerName !== null) return `${click.tenantId}|${click.trackerName}`;
  if (click.trackerId !== null) return `${click.tenantId}#${click.trackerId}`;
  return null;
}

// User agents repeat a lot: digest each once. Bounded in bytes (a user agent is kept up to 1,000
// characters), and cleared when full: a digest is cheap to make again.
const agentDigests = new Map<string, string>();
const MAX_AGENT_DIGEST_BYTES = 1024 * 1024;
// The entry, its slot and the 16-character digest, beyond two bytes a character of the agent.
const AGENT_DIGEST_OVERHEAD_BYTES = 120;
let agentDigestBytes = 0;

/** The user-agent digest cache, for its metrics: estimated bytes and entries. */
export function agentDigestCache(): { bytes: number; entries: number } {
  return { bytes: agentDigestBytes, entries: agentDigests.size };
}

/** Who the visitor is, for unique clicks: their IP and a digest of their user agent. */
function visitorOf(click: Click): string {
  const agent = click.userAgent ?? "";
  let digest = agentDigests.get(agent);
  if (digest === undefined) {
    digest = createHash("sha1").update(agent).digest("base64url").slice(0, 16);
    const bytes = AGENT_DIGEST_OVERHEAD_BYTES + 2 * agent.length;
    if (agentDigestBytes + bytes > MAX_AGENT_DIGEST_BYTES) {
      agentDigests.clear();
      agentDigestBytes = 0;
    }
    agentDigests.set(agent, digest);
    agentDigestBytes += bytes;
  }
  return `${click.ip ?? ""}|${digest}`;
}

/*
 * One statement for the whole batch, so the database does the per-row work and the node only
 * passes one array per column:
 *   firsts   the batch's new (day, link, source, visitor) keys of people (bots never take a visitor's
 *            place): those visitors' first clicks are unique;
 *   written  the clicks, idempotent per id, so a batch retried after an unknown outcome is not
 *            counted twice (the visitors and rollups of a written batch were committed with it);
 *   rollups  each day's totals, grouped and in key order, so that two nodes lock shared rows
 *            in the same order and cannot deadlock; then the coarser rollups the reports read,
 *            one table after the other, each in key order too (coarseRollupCtes).
 */
const WRITE_CLICKS = `
with input as (
  select x.*, (x.at at time zone 'UTC')::date as day
  from unnest($1::text[], $2::text[], $3::timestamptz[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[],
    $8::bigint[], $9::bigint[], $10::text[], $11::text[], $12::text[], $13::text[], $14::text[], $15::text[],
    $16::text[], $17::text[], $18::jsonb[], $19::text[], $20::text[], $21::text[], $22::text[], $23::text[],
    $24::text[], $25::text[], $26::text[], $27::text[])
    with ordinality as x(
    id, tenant_id, at, link_id, account_id, brand_id, program_id, traffic_source_id, tracker_id, visitor, gclid,
    fbclid, msclkid, obclid, parameter_a, parameter_b, external_click_id, utm, user_agent, ip, country, referrer,
    source_click_id, device, os, browser, bot_reason, ord)
),
firsts as (
  insert into click_visitors (day, link_id, traffic_source_id, visitor)
  select distinct day, link_id, traffic_source_id, visitor from input where bot_reason is null order by 1, 2, 3, 4
  on conflict do nothing
  returning day, link_id, traffic_source_id, visitor
),
marked as (
  select i.*,
    f.visitor is not null and i.bot_reason is null
      and row_number() over (
        partition by i.day, i.link_id, i.traffic_source_id, i.visitor, i.bot_reason is null order by i.ord) = 1
      as is_unique
  from input i
  left join firsts f on f.day = i.day and f.link_id = i.link_id and f.traffic_source_id = i.traffic_source_id
    and f.visitor = i.visitor
),
written as (
  insert into clicks (id, tenant_id, at, link_id, account_id, brand_id, program_id, traffic_source_id, tracker_id,
    is_unique, gclid, fbclid, msclkid, obclid, parameter_a, parameter_b, external_click_id, utm, user_agent, ip,
    country, referrer, source_click_id, device, os, browser, bot_reason)
  select id, tenant_id, at, link_id, account_id, brand_id, program_id, traffic_source_id, tracker_id,
    is_unique, gclid, fbclid, msclkid, obclid, parameter_a, parameter_b, external_click_id, utm, user_agent, ip,
    country, referrer, source_click_id, device, os, browser, bot_reason
  from marked
  on conflict (id) do nothing
  returning tenant_id, at, account_id, link_id, brand_id, program_id, traffic_source_id, tracker_id, country, is_unique,
    bot_reason, device, os, browser, parameter_a, parameter_b
),
clicked as (
  select tenant_id, (at at time zone 'UTC')::date as day, account_id, link_id, brand_id, program_id, traffic_source_id,
    coalesce(tracker_id, 0) as tracker_id, coalesce(country, '') as country, ''::text as currency,
    coalesce(device, '') as device, coalesce(os, '') as os, coalesce(browser, '') as browser,
    coalesce(parameter_a, '') as parameter_a, coalesce(parameter_b, '') as parameter_b,
    count(*) filter (where bot_reason is null) as clicks, count(*) filter (where is_unique) as unique_clicks,
    count(*) filter (where bot_reason is not null) as bot_clicks
  from written
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 11, 12, 13, 14, 15
),
rollups as (
  insert into daily_rollups (tenant_id, day, account_id, link_id, brand_id, program_id, traffic_source_id,
    tracker_id, country, currency, clicks, unique_clicks, bot_clicks)
  select tenant_id, day, account_id, link_id, brand_id, program_id, traffic_source_id, tracker_id, country, currency,
    sum(clicks), sum(unique_clicks), sum(bot_clicks)
  from clicked
  group by 1, 2, 3, 4, 5, 6, 7, 8, 9, 10
  order by 1, 2, 3, 4, 5, 6, 7, 8, 9
  on conflict (tenant_id, day, account_id, link_id, brand_id, program_id, traffic_source_id, tracker_id, country,
    currency)
  do update set clicks = daily_rollups.clicks + excluded.clicks,
    unique_clicks = daily_rollups.unique_clicks + excluded.unique_clicks,
    bot_clicks = daily_rollups.bot_clicks + excluded.bot_clicks
  returning 1
),
${coarseRollupCtes("clicked", ["clicks", "unique_clicks", "bot_clicks"], "rollups")}
select count(*)::int as written from written`;

/** The one statement that writes a batch (its trackers resolved first, which may create them). */
export async function clickBatchStatement(
  db: Queryable,
  clicks: Click[],
  now: Date,
  options: WriteClicksOptions = {},
): Promise<{ text: string; params: unknown[] }> {
  const trackers = await resolveTrackers(db, clicks, now, options);
  // One array per column: the database reads each with one array parse, where a JSON document
  // costs a key lookup per column and row (measured: docs/benchmarks.md, "Click redirect").
  const columns: unknown[][] = Array.from({ length: 27 }, () => new Array(clicks.length));
  for (const [i, click] of clicks.entries()) {
    const tracker = trackerKey(click);
    const values = [
      click.id,
      click.tenantId,
      click.at.toISOString(),
      click.linkId,
      click.accountId,
      click.brandId,
      click.programId,
      click.trafficSourceId,
      tracker === null ? null : (trackers.get(tracker) ?? null),
      visitorOf(click),
      click.gclid,
      click.fbclid,
      click.msclkid,
      click.obclid,
      click.parameterA,
      click.parameterB,
      click.externalClickId,
      click.utm === null ? null : JSON.stringify(click.utm),
      click.userAgent,
      click.ip,
      click.country,
      click.referrer,
      click.sourceClickId ?? null,
      click.device ?? null,
      click.os ?? null,
      click.browser ?? null,
      click.botReason ?? null,
    ];
    for (const [c, value] of values.entries()) (columns[c] as unknown[])[i] = value;
  }
  return { text: WRITE_CLICKS, params: columns };
}

/**
 * Writes a batch of clicks, decides their unique visitors and adds them to the rollups.
 * Atomic on its own (one statement after the trackers, whose creation is idempotent).
 */
export async function writeClicks(
  db: Queryable,
  clicks: Click[],
  now: Date,
  options: WriteClicksOptions = {},
): Promise<number> {
  if (clicks.length === 0) return 0;
  const { text, params } = await clickBatchStatement(db, clicks, now, options);
  const [result] = await db.query<{ written: number }>(text, params);
  return result?.written ?? 0;
}
