/** Conversion types (API.md "Tracking"). */
export const CONVERSION_TYPES = [
  "Click",
  "Signup",
  "FirstTimeDeposit",
  "Qualifier",
  "Deposit",
  "CpaCommission",
  "RevShareCommission",
  "FlatFeeCommission",
] as const;
export type ConversionType = (typeof CONVERSION_TYPES)[number];

/** Calculated by programs; recorded and reported, but they never fire postbacks. */
export const COMMISSION_TYPES: ReadonlySet<ConversionType> = new Set([
  "CpaCommission",
  "RevShareCommission",
  "FlatFeeCommission",
]);

export const ATTRIBUTION_SOURCES = ["google", "meta", "microsoft", "outbrain", "direct"] as const;
export type AttributionSource = (typeof ATTRIBUTION_SOURCES)[number];

export function isConversionType(value: string): value is ConversionType {
  return (CONVERSION_TYPES as readonly string[]).includes(value);
}

/** The ad platform a click came from, by the first click id it carries. */
export function attributionSourceOf(
  click: {
    gclid: string | null;
    fbclid: string | null;
    msclkid: string | null;
    obclid: string | null;
  } | null,
): AttributionSource {
  if (!click) return "direct";
  if (click.gclid) return "google";
  if (click.fbclid) return "meta";
  if (click.msclkid) return "microsoft";
  if (click.obclid) return "outbrain";
  return "direct";
}
