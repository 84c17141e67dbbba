import { formatAmount } from "../../format";

/** A conversion's value in its currency; recorded without one, it says so (reports count it as 0). */
export function ConversionValue({ value, currency }: { value: number | null; currency: string | null }) {
  if (value === null) return <span className="muted">no value</span>;
  return (
    <span className="conversion-value">
      {formatAmount(value)}
      {currency && <span className="currency"> {currency}</span>}
    </span>
  );
}
