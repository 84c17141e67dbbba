// One locale for every figure, so the same number always reads the same.
const LOCALE = "en-US";
const integer = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });
const amount = new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const precise = new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 2, maximumFractionDigits: 4 });
const percent = new Intl.NumberFormat(LOCALE, { style: "percent", minimumFractionDigits: 2, maximumFractionDigits: 2 });
const change = new Intl.NumberFormat(LOCALE, {
  style: "percent",
  maximumFractionDigits: 1,
  signDisplay: "exceptZero",
});
const difference = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 2 });
const dateTime = new Intl.DateTimeFormat(LOCALE, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });

export const formatInteger = (value: number) => integer.format(value);
export const formatPercent = (value: number) => percent.format(value);
export const formatDateTime = (iso: string) => `${dateTime.format(new Date(iso))} UTC`;

/** An instant on the clock of an IANA zone, named: "Nov 30, 2026, 9:15 AM (Europe/Berlin)". */
export const formatDateTimeIn = (iso: string, zone: string) =>
  `${new Intl.DateTimeFormat(LOCALE, { dateStyle: "medium", timeStyle: "short", timeZone: zone }).format(new Date(iso))} (${zone})`;

const moneyFormats = new Map<string, Intl.NumberFormat>();

/** The formatter of one currency and style, made once. Throws on a code Intl cannot read. */
function moneyFormat(currency: string, upTo4: boolean, code: boolean): Intl.NumberFormat {
  const key = `${currency}|${upTo4}|${code}`;
  let format = moneyFormats.get(key);
  if (!format) {
    // The currency's own decimals (2 for EUR, 0 for JPY); `precise` shows up to 4, as the API rounds.
    const digits = new Intl.NumberFormat(LOCALE, { style: "currency", currency }).resolvedOptions();
    const min = digits.minimumFractionDigits ?? 2;
    const max = upTo4 ? Math.max(4, min) : min;
    format = code
      ? new Intl.NumberFormat(LOCALE, { minimumFractionDigits: min, maximumFractionDigits: max })
      : new Intl.NumberFormat(LOCALE, {
          style: "currency",
          currency,
          minimumFractionDigits: min,
          maximumFractionDigits: max,
        });
    moneyFormats.set(key, format);
  }
  return format;
}

/**
 * An amount with its currency, the one way every page shows money: "$1,234.50", "€12.00",
 * "¥1,235", "SEK 99.00" (the currency style of Intl), or with `code` the figure and the code after
 * it, "100.00 GBP", where amounts of many currencies sit in one column. `precise`: up to 4
 * decimals, as the API rounds amounts and ratios (EPC), so nothing it answered is lost.
 */
export function formatMoney(
  value: number,
  currency: string,
  options: { precise?: boolean; code?: boolean } = {},
): string {
  const code = currency.toUpperCase();
  try {
    const text = moneyFormat(code, options.precise ?? false, options.code ?? false).format(value);
    return options.code ? `${text} ${code}` : text;
  } catch {
    // Not a code Intl reads (or none): the figure, and the code as the API gave it.
    return `${(options.precise ? precise : amount).format(value)} ${currency}`.trimEnd();
  }
}

const currencyNames = new Intl.DisplayNames(LOCALE, { type: "currency", fallback: "code" });

/** A currency's name as a person reads it: USD -> "US Dollar"; a code Intl does not know, as it is. */
export function currencyName(code: string): string {
  try {
    return currencyNames.of(code.toUpperCase()) ?? code;
  } catch {
    return code;
  }
}

/** A detail's key as a label a person reads: `lastError` -> "Last error". */
export const formatLabel = (key: string) => {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/_/g, " ")
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * The change from `previous` to `current`, the one rule wherever a change is shown: "new" when
 * there was nothing before (a previous zero), "no change" when both are zero, a percentage while
 * it stays readable, and beyond +1,000% the difference itself ("+3,995"): a near-empty previous
 * period makes a ratio ("+4,000x") that says more about the empty period than about the figure.
 * The caller shows the previous figure beside it ("vs 5 before").
 */
export function formatChange(current: number, previous: number): string {
  if (previous === 0) return current === 0 ? "no change" : "new";
  const ratio = (current - previous) / Math.abs(previous);
  if (ratio > 10) return `+${difference.format(current - previous)}`;
  return change.format(ratio);
}
