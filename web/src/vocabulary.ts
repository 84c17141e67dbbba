/**
 * The dashboard's one vocabulary: how every page names a conversion type (the API's
 * `FirstTimeDeposit`) and a metric (the API's `firstTimeDeposit` stat), so a person meets one
 * word for one thing on the overview, the reports, the accounts, the conversions and the forms.
 * A type is one event (singular), a metric counts or sums them (plural).
 */

export const CONVERSION_TYPE_LABELS = {
  Click: "Click",
  Signup: "Signup",
  FirstTimeDeposit: "First-time deposit",
  Qualifier: "Qualifier",
  Deposit: "Deposit",
  CpaCommission: "CPA commission",
  RevShareCommission: "Rev-share commission",
  FlatFeeCommission: "Flat-fee commission",
} as const;

export type ConversionTypeName = keyof typeof CONVERSION_TYPE_LABELS;

/** A type as a person reads it: FirstTimeDeposit -> "First-time deposit"; an unknown name as given. */
export function conversionTypeLabel(type: string): string {
  return Object.hasOwn(CONVERSION_TYPE_LABELS, type) ? CONVERSION_TYPE_LABELS[type as ConversionTypeName] : type;
}

export const METRIC_LABELS = {
  clicks: "Clicks",
  uniqueClicks: "Unique clicks",
  botClicks: "Bot clicks",
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
} as const;
