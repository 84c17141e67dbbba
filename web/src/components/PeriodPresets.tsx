import type { DayRange } from "../dates";
import { PERIOD_PRESETS, PRESET_LABELS, presetRange } from "../periods";

interface PeriodPresetsProps {
  /** The period shown: the chip whose days it is shows chosen. */
  range: DayRange;
  /** The zone whose days the presets are, and the instant they count back from. */
  zone: string;
  now: number;
  onPick: (range: DayRange) => void;
}

/**
 * The periods one click away (today, yesterday, this month, last month, the last 7, 30 or 90
 * days), each the days where `zone`'s clock is: in Tokyo, "today" starts while New York's
 * yesterday is still running.
 */
export function PeriodPresets({ range, zone, now, onPick }: PeriodPresetsProps) {
  return (
    <ul className="presets" aria-label="Periods">
      {PERIOD_PRESETS.map((preset) => {
        const days = presetRange(preset, zone, now);
        const active = days.from === range.from && days.to === range.to;
        return (
          <li key={preset}>
            <button
              type="button"
              className={active ? "chip active" : "chip"}
              aria-pressed={active}
              onClick={() => onPick(days)}
            >
              {PRESET_LABELS[preset]}
            </button>
          </li>
        );
      })}
    </ul>
  );
}
