import type { Queryable } from "../../platform/db/index.js";
import { type ConversionRecord, pageViewsFor } from "../tracking/index.js";
import type { PlaceholderValues } from "./placeholders.js";

interface Named {
  id: number;
  name: string | null;
}

/** A conversion as its postbacks see it, fixed in the delivery event when the conversion is recorded. */
export interface Snapshot {
  /** Null for a Click postback, which carries a click and no conversion. */
  conversionId: string | null;
  conversionType: string;
  eventName: string;
  /** Null for a Click postback: a click has no value. */
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

const named = (id: number | null, name: string | null): Named | null => (id === null ? null : { id, name });

/** Reads the click and the catalog names of a conversion, in the recording transaction. */
export async function snapshotOf(db: Queryable, tenantId: string, conversion: ConversionRecord): Promise<Snapshot> {
  const [row] = await db.query<Row>(
    `select k.at as click_at, k.user_agent, k.gclid, k.fbclid, k.msclkid, k.obclid, k.parameter_a, k.parameter_b,
            k.external_click_id, k.country,
            (select name from accounts where id = $3) as account_name,
            (select name from brands where id = $4) as brand_name,
            (select name from programs where id = $5) as program_name,
            (select name from traffic_sources where id = $6) as source_name,
            (select name from links where id = $7) as link_name,
            (select name from trackers where id = $8) as tracker_name
       from (select 1) one
       left join clicks k on k.tenant_id = $1 and k.id = $2`,
    [
      tenantId,
      conversion.clickId,
      conversion.accountId,
      conversion.brandId,
      conversion.programId,
      conversion.trafficSourceId,
      conversion.linkId,
      conversion.trackerId,
    ],
  );
  const pageViews =
    conversion.attributed && conversion.clickId !== null
      ? await pageViewsFor(db, tenantId, conversion.clickId, new Date(conversion.occurredAt))
      : [];
  return {
    conversionId: conversion.id,
    conversionType: conversion.type,
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
    pageViews,
  };
}

const text = (value: string | number | null | undefined): string | null =>
  value === null || value === undefined ? null : String(value);
const seconds = (iso: string | null): string | null =>
  iso === null ? null : String(Math.floor(Date.parse(iso) / 1000));

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

/** The JSON body of a POST postback (docs/outgoing-webhooks.md); absent values are null. */
export function postPayload(snapshot: Snapshot, eventName: string): Record<string, unknown> {
  const a = snapshot.attribution;
  return {
    conversionId: snapshot.conversionId,
    conversionType: snapshot.conversionType,
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
