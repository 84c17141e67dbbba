// One locale for every figure, so the same number always reads the same.
const LOCALE = "en-US";
const integer = new Intl.NumberFormat(LOCALE, { maximumFractionDigits: 0 });
const amount = new Intl.NumberFormat(LOCALE, { minimumFractionDigits: 2, maximumFractionDigits: 2 });
const percent = new Intl.NumberFormat(LOCALE, { style: "percent", minimumFractionDigits: 2, maximumFractionDigits: 2 });
const change = new Intl.NumberFormat(LOCALE, {
  style: "percent",
  maximumFractionDigits: 1,
  signDisplay: "exceptZero",
});
const dateTime = new Intl.DateTimeFormat(LOCALE, { dateStyle: "medium", timeStyle: "short", timeZone: "UTC" });

export const formatInteger = (value: number) => integer.format(value);
export const formatAmount = (value: number) => amount.format(value);
export const formatPercent = (value: number) => percent.format(value);
export const formatDateTime = (iso: string) => `${dateTime.format(new Date(iso))} UTC`;

/** A detail's key as a label a person reads: `lastError` -> "Last error". */
export const formatLabel = (key: string) => {
  const words = key
    .replace(/([a-z0-9])([A-Z])/g, "$1 $2")
    .replace(/_/g, " ")
    .toLowerCase();
  return words.charAt(0).toUpperCase() + words.slice(1);
};

/**
 * The change from `previous` to `current`, or null when there is nothing to compare with (a
 * previous zero). Beyond ten times, a multiple reads better than a five-digit percentage.
 */
export function formatChange(current: number, previous: number): string | null {
  if (previous === 0) return current === 0 ? "no change" : null;
  const ratio = (current - previous) / Math.abs(previous);
  if (ratio >= 10) return `+${integer.format(current / previous)}×`;
  return change.format(ratio);
}
