import { useId } from "react";
import { FIELD_LABELS, fieldInSentence, STAT_HINTS, STAT_LABELS } from "./labels";
import {
  FIELDS,
  type FieldName,
  type ReportState,
  STATS,
  type StatName,
  shownStats,
  withColumns,
} from "./report-state";

interface ColumnControlsProps {
  state: ReportState;
  onChange: (state: ReportState) => void;
  errors: { fields: string | undefined; stats: string | undefined };
}

/** The breakdowns (the API's `fields`, in the order chosen) and the stats (its `stats`). */
export function ColumnControls({ state, onChange, errors }: ColumnControlsProps) {
  const shown = shownStats(state);
  const toggleField = (field: FieldName, on: boolean) => {
    // A breakdown added goes last: the order chosen is the columns' and the default sort's.
    const fields = on ? [...state.fields, field] : state.fields.filter((f) => f !== field);
    onChange(withColumns(state, fields, state.stats));
  };
  const toggleStat = (stat: StatName, on: boolean) => {
    const chosen = on ? [...shown, stat] : shown.filter((s) => s !== stat);
    // Kept in the report's order; every stat is the API's default, so the address leaves it out.
    const stats = STATS.filter((s) => chosen.includes(s));
    onChange(withColumns(state, state.fields, stats.length === STATS.length ? [] : stats));
  };
  return (
    <div className="report-columns">
      <Choices
        legend="Breakdowns"
        hint={
          state.fields.length > 0
            ? `Rows by ${state.fields.map(fieldInSentence).join(", then ")}.`
            : "None: one row of totals."
        }
        error={errors.fields}
        items={FIELDS.map((field) => ({
          key: field,
          label: FIELD_LABELS[field],
          checked: state.fields.includes(field),
          disabled: false,
          onChange: (on: boolean) => toggleField(field, on),
        }))}
      />
      <Choices
        legend="Stats"
        hint="At least one; ratios come from the summed parts."
        error={errors.stats}
        items={STATS.map((stat) => ({
          key: stat,
          label: STAT_HINTS[stat] ? `${STAT_LABELS[stat]} (${STAT_HINTS[stat]})` : STAT_LABELS[stat],
          checked: shown.includes(stat),
          // The last one stays: without any, the API would answer every stat.
          disabled: shown.length === 1 && shown.includes(stat),
          onChange: (on: boolean) => toggleStat(stat, on),
        }))}
      />
    </div>
  );
}

interface Choice {
  key: string;
  label: string;
  checked: boolean;
  disabled: boolean;
  onChange: (on: boolean) => void;
}

function Choices({
  legend,
  hint,
  error,
  items,
}: {
  legend: string;
  hint: string;
  error: string | undefined;
  items: Choice[];
}) {
  const id = useId();
  const describedBy = [`${id}-hint`, error ? `${id}-error` : ""].filter(Boolean).join(" ");
  return (
    <fieldset className="report-choices" aria-describedby={describedBy}>
      <legend>{legend}</legend>
      <p id={`${id}-hint`} className="muted small">
        {hint}
      </p>
      {error && (
        <p id={`${id}-error`} className="field-error" role="alert">
          {error}
        </p>
      )}
      <ul>
        {items.map((item) => (
          <li key={item.key}>
            <label>
              <input
                type="checkbox"
                checked={item.checked}
                disabled={item.disabled}
                onChange={(e) => item.onChange(e.target.checked)}
              />{" "}
              {item.label}
            </label>
          </li>
        ))}
      </ul>
    </fieldset>
  );
}
