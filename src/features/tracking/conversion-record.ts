import type { ConversionStatus } from "./conversion-status.js";
import type { AttributionSource, ConversionType } from "./conversion-types.js";

/**
 * A conversion row's columns, named rather than `*`: a prepared statement's result may not change
 * shape, so a column added by a newer node's migration must not reach an older node's statements.
 */
export const CONVERSION_COLUMNS = `id, type, event_name, value, currency, click_id, external_id, attributed,
  attribution_source, account_id, brand_id, program_id, link_id, traffic_source_id, tracker_id, country, occurred_at,
  recorded_at, status, device, os, browser, parameter_a, parameter_b`;

export interface ConversionRecord {
  id: string;
  type: ConversionType;
  eventName: string;
  /** Null when the conversion was recorded without a value. */
  value: number | null;
  currency: string | null;
  clickId: string | null;
  externalId: string | null;
  attributed: boolean;
  attributionSource: AttributionSource;
  accountId: number | null;
  brandId: number | null;
  programId: number | null;
  linkId: number | null;
  trafficSourceId: number | null;
  trackerId: number | null;
  occurredAt: string;
  recordedAt: string;
  status: ConversionStatus;
}

export interface ConversionRow {
  id: string;
  type: ConversionType;
  event_name: string;
  value: string | null;
  currency: string | null;
  click_id: string | null;
  external_id: string | null;
  attributed: boolean;
  attribution_source: AttributionSource;
  account_id: string | null;
  brand_id: string | null;
  program_id: string | null;
  link_id: string | null;
  traffic_source_id: string | null;
  tracker_id: string | null;
  country: string | null;
  occurred_at: Date;
  recorded_at: Date;
  status: ConversionStatus;
  /** The click's device type, OS and browser families and sub-ids: rollup keys a status change updates. */
  device: string | null;
  os: string | null;
  browser: string | null;
  parameter_a: string | null;
  parameter_b: string | null;
}

const idOrNull = (value: string | null): number | null => (value === null ? null : Number(value));

export function toRecord(row: ConversionRow): ConversionRecord {
  return {
    id: row.id,
    type: row.type,
    eventName: row.event_name,
    value: row.value === null ? null : Number(row.value),
    currency: row.currency,
    clickId: row.click_id,
    externalId: row.external_id,
    attributed: row.attributed,
    attributionSource: row.attribution_source,
    accountId: idOrNull(row.account_id),
    brandId: idOrNull(row.brand_id),
    programId: idOrNull(row.program_id),
    linkId: idOrNull(row.link_id),
    trafficSourceId: idOrNull(row.traffic_source_id),
    trackerId: idOrNull(row.tracker_id),
    occurredAt: new Date(row.occurred_at).toISOString(),
    recordedAt: new Date(row.recorded_at).toISOString(),
    status: row.status,
  };
}
