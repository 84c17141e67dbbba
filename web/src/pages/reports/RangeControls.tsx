import { type FormEvent, type ReactNode, useEffect, useState } from "react";
import { Field } from "../../components/Field";
import { PRESET_LABELS } from "../../periods";
import {
  joinBound,
  PRESETS,
  type RangeChoice,
  type ReportClock,
  type ReportState,
  splitBound,
  wallBound,
  windowQuery,
} from "./report-state";

const RANGE_LABELS: Record<RangeChoice, string> = { ...PRESET_LABELS, custom: "Custom" };

interface RangeControlsProps {
  state: ReportState;
  /** Now, and the zone whose days the presets and the custom times are. */
  at: ReportClock;
  onChange: (state: ReportState) => void;
  /** The API's messages for the window's ends. */
  errors: { from: string | undefined; to: string | undefined };
  /** Shown beside the period (the time zone and currency pickers). */
  children?: ReactNode;
}

/**
 * The report's window: a preset (whole days of the report's zone, up to today there), or a custom
 * range of dates with optional times on that zone's clock, both ends included, which the API
 * counts to the instant.
 */
export function RangeControls({ state, at, onChange, errors, children }: RangeControlsProps) {
  const from = splitBound(state.from, at.zone);
  const to = splitBound(state.to, at.zone);
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
    const shown = windowQuery(state, at);
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
        hint={
          state.range === "custom" ? `Days and times in ${at.zone}; both ends included.` : `Whole days in ${at.zone}.`
        }
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
          <Field label="From time" hint="Empty: from 00:00.">
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
          <Field label="To time" hint="Empty: to 23:59:59.">
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

/** The window in words, as the API reads it: days and times on the report's zone's clock. */
export function describeWindow(state: ReportState, at: ReportClock): string {
  const { conversionDateFrom: from, conversionDateTo: to } = windowQuery(state, at);
  const shown = (bound: string) =>
    wallBound(bound, at.zone)
      .replace("T", " ")
      .replace(/(\d{2}:\d{2}):00$/, "$1");
  const start = from === undefined ? "29 days before the end" : shown(from);
  const end = to === undefined ? "the end of today" : shown(to);
  return start === end ? `${start} (${at.zone})` : `${start} to ${end} (${at.zone}, both included)`;
}
