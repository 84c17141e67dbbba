import { formatInteger, formatMoney, formatPercent } from "../../format.js";
import { conversionTypeLabel, METRIC_LABELS } from "../../vocabulary.js";
import type { FieldName, StatName } from "./report-state.js";

export const FIELD_LABELS: Record<FieldName, string> = {
  date: "Day",
  week: "Week (Monday)",
  month: "Month",
  hour: "Hour",
  brand: "Brand",
  program: "Program",
  account: "Account",
  link: "Link",
  trafficSource: "Traffic source",
  tracker: "Tracker",
  country: "Country",
  device: "Device type",
  os: "OS",
  browser: "Browser",
  parameterA: "Sub-id A (pa)",
  parameterB: "Sub-id B (pb)",
  conversionType: "Conversion type",
};

/** A field's label inside a sentence ("rows by device type"): its first letter lowered, an acronym's ("OS") kept. */
export function fieldInSentence(field: FieldName): string {
  const label = FIELD_LABELS[field];
  return /^[A-Z]{2}/.test(label) ? label : `${label.charAt(0).toLowerCase()}${label.slice(1)}`;
}

/** What a missing value means in a breakdown by the click's facts (device, OS, browser, country). */
const UNKNOWN_WHEN_MISSING: ReadonlySet<FieldName> = new Set(["country", "device", "os", "browser"]);

/** The metrics' names, from the dashboard's one vocabulary. */
export const STAT_LABELS: Record<StatName, string> = METRIC_LABELS;

export const STAT_HINTS: Partial<Record<StatName, string>> = {
  botClicks: "crawlers and data-center addresses, never in clicks",
  conversionRate: "signups / clicks",
  epc: "commission / clicks",
};

const AMOUNTS: ReadonlySet<StatName> = new Set([
  "depositAmount",
  "cpaCommission",
  "revShareCommission",
  "flatFeeCommission",
  "commission",
  "epc",
]);

/** Whether a stat is money, in the answer's `meta.currency`. */
export const isAmount = (stat: StatName) => AMOUNTS.has(stat);

/**
 * A stat's value as shown: amounts in `currency` (the answer's), with up to 4 decimals as the API
 * rounds them, so nothing it answered is lost.
 */
export function formatStat(stat: StatName, value: unknown, currency: string): string {
  const n = typeof value === "number" ? value : Number(value ?? 0);
  if (!Number.isFinite(n)) return "–";
  if (stat === "conversionRate") return formatPercent(n);
  return AMOUNTS.has(stat) ? formatMoney(n, currency, { precise: true }) : formatInteger(n);
}

/** An hour as the API gives it (`2026-11-01T10:00+01:00`): the local hour, its offset kept apart. */
const HOUR = /^(\d{4}-\d{2}-\d{2})T(\d{2}:\d{2})(?::\d{2})?(Z|[+-]\d{2}:\d{2})$/;

/**
 * An hour row's value as read: "2026-11-01 10:00 (+01:00)". The offset stays: on the night clocks
 * go back, 01:00 comes twice and only the offset tells the two apart.
 */
export function formatHour(value: string): string {
  const match = HOUR.exec(value);
  if (!match) return value;
  return `${match[1]} ${match[2]} (${match[3] === "Z" ? "+00:00" : match[3]})`;
}

/** A breakdown's value as read: the name the API gives, or what a missing one means there. */
export function formatField(field: FieldName, value: unknown): string {
  if (field === "hour" && typeof value === "string") return formatHour(value);
  if (field === "conversionType" && typeof value === "string" && value !== "") return conversionTypeLabel(value);
  if (value !== null && value !== undefined && value !== "") return String(value);
  if (field === "conversionType") return "None (clicks)";
  if (UNKNOWN_WHEN_MISSING.has(field)) return "Unknown";
  return "None";
}
