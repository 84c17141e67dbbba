import { formatInteger, formatMoney, formatPercent } from "../../format.js";
import type { FieldName, StatName } from "./report-state.js";

export const FIELD_LABELS: Record<FieldName, string> = {
  date: "Day",
  week: "Week (Monday)",
  month: "Month",
  brand: "Brand",
  program: "Program",
  account: "Account",
  link: "Link",
  trafficSource: "Traffic source",
  tracker: "Tracker",
  country: "Country",
  conversionType: "Conversion type",
};

export const STAT_LABELS: Record<StatName, string> = {
  clicks: "Clicks",
  uniqueClicks: "Unique clicks",
  signups: "Signups",
  firstTimeDeposit: "First-time deposits",
  qualifiers: "Qualifiers",
  deposits: "Deposits",
  depositAmount: "Deposit amount",
  cpaCommission: "CPA commission",
  revShareCommission: "Rev-share commission",
  flatFeeCommission: "Flat-fee commission",
  commission: "Commission",
  conversionRate: "Conversion rate",
  epc: "EPC",
};

export const STAT_HINTS: Partial<Record<StatName, string>> = {
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

/** A breakdown's value as read: the name the API gives, or what a missing one means there. */
export function formatField(field: FieldName, value: unknown): string {
  if (value !== null && value !== undefined && value !== "") return String(value);
  if (field === "conversionType") return "None (clicks)";
  if (field === "country") return "Unknown";
  return "None";
}
