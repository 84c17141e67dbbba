import type { Queryable } from "../../platform/db/index.js";
import { attributionSourceOf, type Click } from "../tracking/index.js";
import { candidates, fires, insertEvents, type NewEvent } from "./fan-out.js";
import type { Snapshot } from "./snapshot.js";

interface Names {
  id: string;
  tracker_id: string | null;
  account_name: string | null;
  brand_name: string | null;
  program_name: string | null;
  source_name: string | null;
  link_name: string | null;
  tracker_name: string | null;
}

/** A click as a Click delivery sees it: no conversion, no value, the click's own time. */
function clickSnapshot(click: Click, names: Names | undefined): Snapshot {
  const named = (id: number | null, name: string | null | undefined) =>
    id === null ? null : { id, name: name ?? null };
  const trackerId = names?.tracker_id === null || names?.tracker_id === undefined ? null : Number(names.tracker_id);
  return {
    conversionId: null,
    conversionType: "Click",
    eventName: "Click",
    eventValue: null,
    currency: null,
    eventTime: click.at.toISOString(),
    attributionSource: attributionSourceOf(click),
    clickId: click.id,
    clickDate: click.at.toISOString(),
    country: click.country,
    clientUserAgent: click.userAgent,
    account: named(click.accountId, names?.account_name),
    brand: named(click.brandId, names?.brand_name),
    program: named(click.programId, names?.program_name),
    trafficSource: named(click.trafficSourceId, names?.source_name),
    link: named(click.linkId, names?.link_name),
    tracker: named(trackerId, names?.tracker_name),
    attribution: {
      gclid: click.gclid,
      fbclid: click.fbclid,
      msclkid: click.msclkid,
      obclid: click.obclid,
      parameterA: click.parameterA,
      parameterB: click.parameterB,
      externalClickId: click.externalClickId,
    },
    pageViews: [],
  };
}

/**
 * Click webhooks: for tenants with click webhooks turned on, one delivery event per counted
 * click and matching webhook (type filter empty or holding Click), written in the transaction
 * that writes the click batch. Costs one query per batch when no tenant in it uses them.
 */
export async function clickFanOut(tx: Queryable, clicks: Click[], now: Date): Promise<void> {
  const webhooks = await candidates(tx, [...new Set(clicks.map((c) => c.tenantId))], true);
  if (webhooks.length === 0) return;
  let firing = clicks.flatMap((click) =>
    webhooks
      .filter(
        (w) => w.tenant_id === click.tenantId && fires(w, "Click", click.trafficSourceId, attributionSourceOf(click)),
      )
      .map((webhook) => ({ click, webhook })),
  );
  if (firing.length === 0) return;
  // A batch written again (its first commit's answer was lost) skips the clicks it holds, so
  // their deliveries must not be written twice either.
  const done = await tx.query<{ click_id: string }>(
    "select distinct click_id from webhook_events where conversion_type = 'Click' and click_id = any($1::text[])",
    [[...new Set(firing.map((f) => f.click.id))]],
  );
  if (done.length > 0) {
    const skip = new Set(done.map((d) => d.click_id));
    firing = firing.filter((f) => !skip.has(f.click.id));
    if (firing.length === 0) return;
  }
  const rows = await tx.query<Names>(
    `select k.id, k.tracker_id, a.name as account_name, b.name as brand_name, p.name as program_name,
            s.name as source_name, l.name as link_name, tr.name as tracker_name
       from clicks k
       left join accounts a on a.id = k.account_id
       left join brands b on b.id = k.brand_id
       left join programs p on p.id = k.program_id
       left join traffic_sources s on s.id = k.traffic_source_id
       left join links l on l.id = k.link_id
       left join trackers tr on tr.id = k.tracker_id
      where k.id = any($1::text[])`,
    [[...new Set(firing.map((f) => f.click.id))]],
  );
  const names = new Map(rows.map((r) => [r.id, r]));
  const events: NewEvent[] = firing.map(({ click, webhook }) => ({
    tenantId: click.tenantId,
    webhook,
    conversionId: null,
    clickId: click.id,
    type: "Click",
    snapshot: clickSnapshot(click, names.get(click.id)),
  }));
  await insertEvents(tx, events, now);
}
