import { formatMoney } from "../../format";

/**
 * A conversion's own amount in its own currency, "100.00 GBP", as recorded (never converted);
 * "—" when recorded without a value (reports count it as 0).
 */
export function ConversionValue({ value, currency }: { value: number | string | null; currency: string | null }) {
  const n = value === null || value === "" ? Number.NaN : Number(value);
  if (Number.isNaN(n)) {
    return (
      <span className="muted">
        <span aria-hidden="true">—</span>
        <span className="visually-hidden">no value</span>
      </span>
    );
  }
  return (
    <span className="conversion-value" data-value={String(value)} data-currency={currency ?? ""}>
      {formatMoney(n, currency ?? "", { code: true, precise: true })}
    </span>
  );
}
