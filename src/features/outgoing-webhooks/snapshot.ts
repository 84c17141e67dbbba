import { prepared, type Queryable } from "../../platform/db/index.js";
import type { ConversionRecord } from "../tracking/index.js";
import type { PlaceholderValues } from "./placeholders.js";

const CLICK_ROWS = prepared(
  "webhooks.snapshot-clicks",
  `select c.id as conversion_id, k.at as click_at, k.user_agent, k.gclid, k.fbclid, k.msclkid, k.obclid,
            k.parameter_a, k.parameter_b, k.external_click_id, k.country,
            a.name as account_name, b.name as brand_name, p.name as program_name, s.name as source_name,
            l.name as link_name, tr.name as tracker_name
       from unnest($2::text[], $3::text[], $4::bigint[], $5::bigint[], $6::bigint[], $7::bigint[], $8::bigint[],
                   $9::bigint[])
            as c (id, click_id, account_id, brand_id, program_id, traffic_source_id, link_id, tracker_id)
       left join clicks k on k.tenant_id = $1 and k.id = c.click_id
       left join accounts a on a.id = c.account_id
       left join brands b on b.id = c.brand_id
       left join programs p on p.id = c.program_id
       left join traffic_sources s on s.id = c.traffic_source_id
       left join links l on l.id = c.link_id
       left join trackers tr on tr.id = c.tracker_id`,
);

const PAGE_VIEWS = prepared(
  "webhooks.snapshot-page-views",
  `select v.conversion_id, v.url, v.title, v.referrer, v.at
       from (select c.id as conversion_id, p.id, p.url, p.title, p.referrer, p.at,
                    row_number() over (partition by c.id order by p.at, p.id) as n
               from unnest($2::text[], $3::text[], $4::timestamptz[]) as c (id, click_id, until)
               join page_views p on p.click_id = c.click_id and p.tenant_id = $1 and p.at <= c.until) v
      where v.n <= $5
      order by v.conversion_id, v.at, v.id`,
);

interface Named {
  id: number;
  name: string | null;
}

/** A conversion as its deliveries see it, fixed in the delivery event when the conversion is recorded. */
export interface Snapshot {
  /** Null for a Click delivery, which carries a click and no conversion. */
  conversionId: string | null;
  conversionType: string;
  /**
   * The conversion's status when this delivery was queued (its recording or a change of it).
   * Absent on events queued before statuses existed, when every conversion was approved; null on
   * a Click delivery.
   */
  conversionStatus?: string | null;
  eventName: string;
  /** Null for a Click delivery: a click has no value. */
  eventValue: number | null;
  currency: string | null;
  eventTime: string;
  attributionSource: string;
  clickId: string | null;
  clickDate: string | null;
  country: string | null;
  clientUserAgent: string | null;
  account: Named | null;
  brand: Named | null;
  program: Named | null;
  trafficSource: Named | null;
  link: Named | null;
  tracker: Named | null;
  attribution: {
    gclid: string | null;
    fbclid: string | null;
    msclkid: string | null;
    obclid: string | null;
    parameterA: string | null;
    parameterB: string | null;
    externalClickId: string | null;
  };
  pageViews: { url: string; title: string | null; referrer: string | null; at: string }[];
  /** Filled only by Simulate. */
  simulate?: Partial<
    Record<
      "medium" | "campaign" | "term" | "content" | "creative" | "location" | "locationPath" | "documentTitle",
      string
    >
  >;
}

interface Row {
  conversion_id: string;
  click_at: Date | null;
  user_agent: string | null;
  gclid: string | null;
  fbclid: string | null;
  msclkid: string | null;
  obclid: string | null;
  parameter_a: string | null;
  parameter_b: string | null;
  external_click_id: string | null;
  country: string | null;
  account_name: string | null;
  brand_name: string | null;
  program_name: string | null;
  source_name: string | null;
  link_name: string | null;
  tracker_name: string | null;
}

interface PageViewRow {
  conversion_id: string;
  url: string;
  title: string | null;
  referrer: string | null;
  at: Date;
}

/** The most page views a snapshot carries, as the conversion's own page (pageViewsFor) shows. */
const PAGE_VIEWS_PER_SNAPSHOT = 500;

const named = (id: number | null, name: string | null): Named | null => (id === null ? null : { id, name });

/** The clicks and catalog names of conversions, one row each, in one statement. */
function clickRows(db: Queryable, tenantId: string, conversions: readonly ConversionRecord[]): Promise<Row[]> {
  return db.query<Row>(CLICK_ROWS, [
    tenantId,
    conversions.map((c) => c.id),
    conversions.map((c) => c.clickId),
    conversions.map((c) => c.accountId),
    conversions.map((c) => c.brandId),
    conversions.map((c) => c.programId),
    conversions.map((c) => c.trafficSourceId),
    conversions.map((c) => c.linkId),
    conversions.map((c) => c.trackerId),
  ]);
}

/** The page views of attributed conversions' clicks up to each conversion's time, oldest first, in one statement. */
async function pageViewsOf(
  db: Queryable,
  tenantId: string,
  conversions: readonly ConversionRecord[],
): Promise<Map<string, Snapshot["pageViews"]>> {
  const attributed = conversions.filter((c) => c.attributed && c.clickId !== null);
  const views = new Map<string, Snapshot["pageViews"]>();
  if (attributed.length === 0) return views;
  const rows = await db.query<PageViewRow>(PAGE_VIEWS, [
    tenantId,
    attributed.map((c) => c.id),
    attributed.map((c) => c.clickId),
    attributed.map((c) => c.occurredAt),
    PAGE_VIEWS_PER_SNAPSHOT,
  ]);
  for (const row of rows) {
    let list = views.get(row.conversion_id);
    if (list === undefined) {
      list = [];
      views.set(row.conversion_id, list);
    }
    list.push({ url: row.url, title: row.title, referrer: row.referrer, at: new Date(row.at).toISOString() });
  }
  return views;
}

/**
 * Reads the clicks, catalog names and page views of conversions, in the recording
 * transaction: two statements whatever the number of conversions. By conversion id.
 */
export async function snapshotsOf(
  db: Queryable,
  tenantId: string,
  conversions: readonly ConversionRecord[],
): Promise<Map<string, Snapshot>> {
  const snapshots = new Map<string, Snapshot>();
  if (conversions.length === 0) return snapshots;
  const rows = new Map((await clickRows(db, tenantId, conversions)).map((row) => [row.conversion_id, row]));
  const pageViews = await pageViewsOf(db, tenantId, conversions);
  for (const conversion of conversions) {
    const row = rows.get(conversion.id);
    snapshots.set(conversion.id, {
      conversionId: conversion.id,
      conversionType: conversion.type,
      conversionStatus: conversion.status,
      eventName: conversion.eventName,
      eventValue: conversion.value,
      currency: conversion.currency,
      eventTime: conversion.occurredAt,
      attributionSource: conversion.attributionSource,
      clickId: conversion.clickId,
      clickDate: row?.click_at ? new Date(row.click_at).toISOString() : null,
      country: row?.country ?? null,
      clientUserAgent: row?.user_agent ?? null,
      account: named(conversion.accountId, row?.account_name ?? null),
      brand: named(conversion.brandId, row?.brand_name ?? null),
      program: named(conversion.programId, row?.program_name ?? null),
      trafficSource: named(conversion.trafficSourceId, row?.source_name ?? null),
      link: named(conversion.linkId, row?.link_name ?? null),
      tracker: named(conversion.trackerId, row?.tracker_name ?? null),
      attribution: {
        gclid: row?.gclid ?? null,
        fbclid: row?.fbclid ?? null,
        msclkid: row?.msclkid ?? null,
        obclid: row?.obclid ?? null,
        parameterA: row?.parameter_a ?? null,
        parameterB: row?.parameter_b ?? null,
        externalClickId: row?.external_click_id ?? null,
      },
      pageViews: pageViews.get(conversion.id) ?? [],
    });
  }
  return snapshots;
}

const text = (value: string | number | null | undefined): string | null =>
  value === null || value === undefined ? null : String(value);
const seconds = (iso: string | null): string | null =>
  iso === null ? null : String(Math.floor(Date.parse(iso) / 1000));

/** A snapshot's conversion status: approved on one queued before statuses existed, null on a Click delivery. */
const statusOf = (snapshot: Snapshot): string | null =>
  snapshot.conversionStatus ?? (snapshot.conversionId === null ? null : "approved");

/** The placeholder values of a snapshot; `eventName` is the webhook's custom name when it has one. */
export function placeholderValues(snapshot: Snapshot, eventName: string): PlaceholderValues {
  const a = snapshot.attribution;
  return {
    clickId: snapshot.clickId,
    externalClickId: a.externalClickId,
    eventName,
    eventValue: text(snapshot.eventValue),
    currencyCode: snapshot.currency,
    eventTime: snapshot.eventTime,
    eventTimeStamp: seconds(snapshot.eventTime),
    conversionId: snapshot.conversionId,
    conversionType: snapshot.conversionType,
    conversionStatus: statusOf(snapshot),
    attributionSource: snapshot.attributionSource,
    parameterA: a.parameterA,
    parameterB: a.parameterB,
    gclid: a.gclid,
    fbclid: a.fbclid,
    msclkid: a.msclkid,
    obclid: a.obclid,
    clickTime: snapshot.clickDate,
    clickTimeStamp: seconds(snapshot.clickDate),
    country: snapshot.country,
    trafficSource: snapshot.trafficSource?.name ?? null,
    trafficSourceId: text(snapshot.trafficSource?.id),
    account: snapshot.account?.name ?? null,
    accountId: text(snapshot.account?.id),
    brand: snapshot.brand?.name ?? null,
    brandId: text(snapshot.brand?.id),
    program: snapshot.program?.name ?? null,
    programId: text(snapshot.program?.id),
    link: snapshot.link?.name ?? null,
    linkId: text(snapshot.link?.id),
    tracker: snapshot.tracker?.name ?? null,
    trackerId: text(snapshot.tracker?.id),
    clientUserAgent: snapshot.clientUserAgent,
    ...snapshot.simulate,
  };
}

/** The JSON body of a POST delivery (docs/outgoing-webhooks.md); absent values are null. */
export function postPayload(snapshot: Snapshot, eventName: string): Record<string, unknown> {
  const a = snapshot.attribution;
  return {
    conversionId: snapshot.conversionId,
    conversionType: snapshot.conversionType,
    status: statusOf(snapshot),
    eventName,
    eventValue: snapshot.eventValue,
    currency: snapshot.currency,
    eventTime: snapshot.eventTime,
    clickId: snapshot.clickId,
    clickDate: snapshot.clickDate,
    account: snapshot.account,
    brand: snapshot.brand,
    program: snapshot.program,
    trafficSource: snapshot.trafficSource,
    attribution: {
      gclid: a.gclid,
      fbclid: a.fbclid,
      parameterA: a.parameterA,
      parameterB: a.parameterB,
      externalClickId: a.externalClickId,
    },
    pageViews: snapshot.pageViews,
  };
}
