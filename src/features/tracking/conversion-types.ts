/** Conversion types (docs/conversions.md: which a caller records, which fire webhooks). */
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

/**
 * The types a caller records (postback and API). A Click is made by the click redirect, never
 * posted: recording one would count a click that never happened.
 */
export const RECORDABLE_TYPES = CONVERSION_TYPES.filter(
  (type): type is Exclude<ConversionType, "Click"> => type !== "Click",
);

const BY_LOWER_CASE: ReadonlyMap<string, ConversionType> = new Map(CONVERSION_TYPES.map((t) => [t.toLowerCase(), t]));

/**
 * The type a name means in any case (`signup`, `SIGNUP`: Signup), or the name as given when it
 * means none: networks write the macro's value in whatever case their template has.
 */
export function canonicalTypeName(name: string): string {
  return BY_LOWER_CASE.get(name.trim().toLowerCase()) ?? name;
}

/** What each type means, and whether it fires postbacks (docs/conversions.md lists the same). */
export const TYPE_MEANINGS: Record<ConversionType, string> = {
  Click: "A click on a tracking link; made by the click redirect, never recorded by a caller",
  Signup: "A visitor registered with the brand",
  FirstTimeDeposit: "A player's first deposit",
  Qualifier: "A player met the program's qualifying criteria (for CPA)",
  Deposit: "A deposit after the first",
  CpaCommission: "A CPA commission the program calculated",
  RevShareCommission: "A revenue-share commission the program calculated (may be negative)",
  FlatFeeCommission: "A flat-fee commission the program calculated",
};

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
