import { statusLabel } from "./search";
import "./conversions.css";

/** A conversion's status as a coloured badge: Pending, Approved, Rejected or Reversed. */
export function StatusBadge({ status }: { status: string }) {
  return (
    <span className={`badge conversion-status status-${status}`} data-status={status}>
      {statusLabel(status)}
    </span>
  );
}
