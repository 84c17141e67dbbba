import { type FormEvent, useEffect, useState } from "react";
import { rangeProblem } from "../../dates";
import type { Periods } from "./search";

export interface PeriodChoice {
  from: string;
  to: string;
  /** Absent: compare with the previous period of the same length. */
  compare?: { from: string; to: string };
}

/** The metrics period and what it is compared with: the previous period of the same length, or one chosen. */
export function PeriodControls({ periods, onApply }: { periods: Periods; onApply: (choice: PeriodChoice) => void }) {
  const [from, setFrom] = useState(periods.range.from);
  const [to, setTo] = useState(periods.range.to);
  const [custom, setCustom] = useState(!periods.previous);
  const [compareFrom, setCompareFrom] = useState(periods.comparison.from);
  const [compareTo, setCompareTo] = useState(periods.comparison.to);
  const [error, setError] = useState<string | null>(null);
  // The URL is the truth: a back button or a shared link resets the form to it.
  useEffect(() => {
    setFrom(periods.range.from);
    setTo(periods.range.to);
    setCustom(!periods.previous);
    setCompareFrom(periods.comparison.from);
    setCompareTo(periods.comparison.to);
  }, [periods.range.from, periods.range.to, periods.previous, periods.comparison.from, periods.comparison.to]);

  function apply(event: FormEvent) {
    event.preventDefault();
    const problem =
      rangeProblem(from, to, "period") ?? (custom ? rangeProblem(compareFrom, compareTo, "comparison period") : null);
    setError(problem);
    if (problem) return;
    onApply(custom ? { from, to, compare: { from: compareFrom, to: compareTo } } : { from, to });
  }

  return (
    <form className="period-controls" onSubmit={apply} noValidate aria-label="Period">
      <div className="field inline">
        <label htmlFor="period-from">From</label>
        <input id="period-from" type="date" value={from} max={to} onChange={(e) => setFrom(e.target.value)} />
      </div>
      <div className="field inline">
        <label htmlFor="period-to">To</label>
        <input id="period-to" type="date" value={to} min={from} onChange={(e) => setTo(e.target.value)} />
      </div>
      <div className="field inline">
        <label htmlFor="period-compare">Compare with</label>
        <select
          id="period-compare"
          value={custom ? "custom" : "previous"}
          onChange={(e) => setCustom(e.target.value === "custom")}
        >
          <option value="previous">Previous period</option>
          <option value="custom">Custom period</option>
        </select>
      </div>
      {custom && (
        <>
          <div className="field inline">
            <label htmlFor="compare-from">Comparison from</label>
            <input
              id="compare-from"
              type="date"
              value={compareFrom}
              max={compareTo}
              onChange={(e) => setCompareFrom(e.target.value)}
            />
          </div>
          <div className="field inline">
            <label htmlFor="compare-to">Comparison to</label>
            <input
              id="compare-to"
              type="date"
              value={compareTo}
              min={compareFrom}
              onChange={(e) => setCompareTo(e.target.value)}
            />
          </div>
        </>
      )}
      <button type="submit" className="button secondary">
        Apply
      </button>
      {error && (
        <p className="field-error" role="alert">
          {error}
        </p>
      )}
    </form>
  );
}

const describe = (range: { from: string; to: string }) =>
  range.from === range.to ? range.from : `${range.from} to ${range.to}`;

/** The period in words, as the table's figures read it: days of `zone` (the answer's, once there is one). */
export function PeriodSummary({ periods, zone }: { periods: Periods; zone: string }) {
  return (
    <p className="muted" data-testid="period-summary">
      Metrics for {describe(periods.range)} ({zone}), compared with {describe(periods.comparison)}
      {periods.previous ? " (the previous period)" : ""}.
    </p>
  );
}
