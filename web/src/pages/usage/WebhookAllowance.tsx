import { useQuery } from "@tanstack/react-query";
import { ErrorState } from "../../components/states";
import { formatDateTime, formatInteger, formatPercent } from "../../format";
import { allowanceQuery } from "./queries";

/**
 * Webhook deliveries sent this month against the plan's monthly allowance, and those held for
 * want of it (GET /api/v1/usage/allowance): what the metering counts, so the tenant sees a hold
 * coming before its receivers notice one.
 */
export function WebhookAllowance() {
  const allowance = useQuery(allowanceQuery);
  return (
    <section className="panel" aria-labelledby="usage-allowance-title">
      <h2 id="usage-allowance-title">Webhook allowance</h2>
      {allowance.isError ? (
        <ErrorState error={allowance.error} onRetry={() => void allowance.refetch()} />
      ) : allowance.data ? (
        <>
          <p className="muted">
            Outgoing webhook deliveries from {formatDateTime(allowance.data.period.from)} to{" "}
            {formatDateTime(allowance.data.period.to)} (the calendar month, UTC).
          </p>
          <ul className="cards">
            <li className="card" data-stat="allowanceUsed" data-value={allowance.data.used}>
              <h3 className="card-label">
                Sent <span className="card-hint">this month</span>
              </h3>
              <p className="card-value">{formatInteger(allowance.data.used)}</p>
              <p className="card-compare">
                {allowance.data.allowance === null
                  ? "No monthly limit"
                  : `of ${formatInteger(allowance.data.allowance)} (${formatPercent(
                      allowance.data.allowance === 0 ? 1 : allowance.data.used / allowance.data.allowance,
                    )})`}
              </p>
            </li>
            <li
              className={allowance.data.held > 0 ? "card rate-limited" : "card"}
              data-stat="allowanceHeld"
              data-value={allowance.data.held}
            >
              <h3 className="card-label">
                Held <span className="card-hint">past the allowance</span>
              </h3>
              <p className="card-value">{formatInteger(allowance.data.held)}</p>
              <p className="card-compare">
                {allowance.data.held > 0 ? "Sent when the month turns or the allowance is raised" : "\u00a0"}
              </p>
            </li>
          </ul>
        </>
      ) : (
        <p className="card-value loading" aria-busy="true">
          …
        </p>
      )}
    </section>
  );
}
