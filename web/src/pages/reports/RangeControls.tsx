import { type FormEvent, type ReactNode, useEffect, useState } from "react";
import { Field } from "../../components/Field";
import { joinBound, PRESETS, type RangeChoice, type ReportState, splitBound, windowQuery } from "./report-state";

const RANGE_LABELS: Record<RangeChoice, string> = {
  today: "Today",
  yesterday: "Yesterday",
  "7d": "Last 7 days",
  "30d": "Last 30 days",
  "90d": "Last 90 days",
  custom: "Custom",
};

interface RangeControlsProps {
  state: ReportState;
  now: number;
  onChange: (state: ReportState) => void;
  /** The API's messages for the window's ends. */
  errors: { from: string | undefined; to: string | undefined };
  /** Shown beside the period (the currency picker). */
  children?: ReactNode;
}

/**
 * The report's window: a preset (whole UTC days up to today), or a custom range of dates with
 * optional UTC times, both ends included, which the API counts to the instant.
 */
export function RangeControls({ state, now, onChange, errors, children }: RangeControlsProps) {
  const from = splitBound(state.from);
  const to = splitBound(state.to);
  const [fromDay, setFromDay] = useState(from.day);
  const [fromTime, setFromTime] = useState(from.time);
  const [toDay, setToDay] = useState(to.day);
  const [toTime, setToTime] = useState(to.time);
  useEffect(() => {
    setFromDay(from.day);
    setFromTime(from.time);
    setToDay(to.day);
    setToTime(to.time);
  }, [from.day, from.time, to.day, to.time]);

  function choose(range: RangeChoice) {
    const { from: _from, to: _to, ...rest } = state;
    if (range !== "custom") return onChange({ ...rest, range, offset: 0 });
    // A custom range starts from the window shown, so a person adjusts it rather than types it all.
    const shown = windowQuery(state, now);
    onChange({
      ...rest,
      range,
      offset: 0,
      ...(shown.conversionDateFrom ? { from: shown.conversionDateFrom } : {}),
      ...(shown.conversionDateTo ? { to: shown.conversionDateTo } : {}),
    });
  }

  function apply(event: FormEvent) {
    event.preventDefault();
    const { from: _from, to: _to, ...rest } = state;
    const nextFrom = joinBound(fromDay, fromTime);
    const nextTo = joinBound(toDay, toTime);
    onChange({
      ...rest,
      range: "custom",
      offset: 0,
      ...(nextFrom ? { from: nextFrom } : {}),
      ...(nextTo ? { to: nextTo } : {}),
    });
  }

  return (
    <div className="report-range">
      <Field
        label="Period"
        hint={state.range === "custom" ? "UTC; both ends included." : "Whole UTC days, today included."}
      >
        {(props) => (
          <select {...props} value={state.range} onChange={(e) => choose(e.target.value as RangeChoice)}>
            {[...PRESETS, "custom" as const].map((range) => (
              <option key={range} value={range}>
                {RANGE_LABELS[range]}
              </option>
            ))}
          </select>
        )}
      </Field>
      {children}
      {state.range === "custom" && (
        <form className="report-custom-range" onSubmit={apply} noValidate aria-label="Custom range">
          <Field label="From" error={errors.from}>
            {(props) => <input {...props} type="date" value={fromDay} onChange={(e) => setFromDay(e.target.value)} />}
          </Field>
          <Field label="From time (UTC)" hint="Empty: from 00:00.">
            {(props) => (
              <input
                {...props}
                type="time"
                value={fromTime}
                disabled={!fromDay}
                onChange={(e) => setFromTime(e.target.value)}
              />
            )}
          </Field>
          <Field label="To" error={errors.to}>
            {(props) => <input {...props} type="date" value={toDay} onChange={(e) => setToDay(e.target.value)} />}
          </Field>
          <Field label="To time (UTC)" hint="Empty: to 23:59:59.">
            {(props) => (
              <input
                {...props}
                type="time"
                value={toTime}
                disabled={!toDay}
                onChange={(e) => setToTime(e.target.value)}
              />
            )}
          </Field>
          <button type="submit" className="button secondary">
            Apply
          </button>
        </form>
      )}
    </div>
  );
}

/** The window in words, as the API reads it. */
export function describeWindow(state: ReportState, now: number): string {
  const { conversionDateFrom: from, conversionDateTo: to } = windowQuery(state, now);
  const start = from ?? "29 days before the end";
  const end = to ?? "the end of today";
  const shown = (bound: string) => bound.replace("T", " ").replace(/:00Z$|Z$/, "");
  return start === end ? `${shown(start)} (UTC)` : `${shown(start)} to ${shown(end)} (UTC, both included)`;
}
