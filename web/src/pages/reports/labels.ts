import type { FieldName, StatName } from "./report-state";

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

// The API rounds amounts and ratios to 4 decimals: up to 4 are shown, so nothing it answered is lost.
const LOCALE = "en-US";
const count = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });
const amount = new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 2, maximumFractionDigits: 4 });
const percent = new Intl.NumberFormat(LOCALE, { style: "percent", minimumFractionDigits: 2, maximumFractionDigits: 2 });

const AMOUNTS: ReadonlySet<StatName> = new Set([
  "depositAmount",
  "cpaCommission",
  "revShareCommission",
  "flatFeeCommission",
  "commission",
  "epc",
]);

export function formatStat(stat: StatName, value: unknown): string {
  const n = typeof value === "number" ? value : Number(value ?? 0);
  if (!Number.isFinite(n)) return "–";
  if (stat === "conversionRate") return percent.format(n);
  return AMOUNTS.has(stat) ? amount.format(n) : count.format(n);
}

/** A breakdown's value as read: the name the API gives, or what a missing one means there. */
export function formatField(field: FieldName, value: unknown): string {
  if (value !== null && value !== undefined && value !== "") return String(value);
  if (field === "conversionType") return "None (clicks)";
  if (field === "country") return "Unknown";
  return "None";
}
