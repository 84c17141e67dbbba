/**
 * The chart's series: with a breakdown beside the time one, one series per value of the first
 * such breakdown, the ten largest by the charted stat over the whole window and one "Other" for
 * the rest, so the chart stays readable whatever the breakdown's cardinality.
 */
import type { FieldName, StatName } from "./report-state.js";
import { TIME_FIELDS } from "./report-state.js";

/** A row of the report's answer (fetch-report.ts), keyed by field and stat. */
type ReportRow = Record<string, unknown>;

/** How many values get a series of their own; the rest are summed into "Other". */
export const TOP_SERIES = 10;

export interface ChartSeries {
  /** The value as the table shows it; "Other" for the rest. */
  name: string;
  /** The value's id where its breakdown has one (a drill narrows to it); null for "Other" and id-less values. */
  id: number | null;
  /** One value per period, in the periods' order. */
  values: number[];
}

export interface ChartData {
  periods: string[];
  series: ChartSeries[];
}

/** The breakdown the chart splits its bars by: the first one that is not a time breakdown. */
export const splitFieldOf = (fields: readonly FieldName[]): FieldName | undefined =>
  fields.find((f) => !TIME_FIELDS.includes(f));

const idOf = (value: unknown): number | null => {
  const id = Number(value);
  return value !== null && value !== undefined && value !== "" && Number.isSafeInteger(id) && id > 0 ? id : null;
};

/**
 * Rows of `time` (and `split` when given) to periods and series. `label` turns a period's raw
 * value into what the axis shows, `name` a split value into the series' name. Periods keep the
 * rows' order; without `split`, one series named `statLabel`.
 */
export function chartData(
  rows: readonly ReportRow[],
  options: {
    time: FieldName;
    split: FieldName | undefined;
    stat: StatName;
    statLabel: string;
    label: (period: unknown) => string;
    name: (value: unknown) => string;
  },
): ChartData {
  const { time, split, stat } = options;
  const periods: string[] = [];
  const periodIndex = new Map<string, number>();
  for (const row of rows) {
    const period = options.label(row[time]);
    if (!periodIndex.has(period)) {
      periodIndex.set(period, periods.length);
      periods.push(period);
    }
  }
  const statOf = (row: ReportRow) => Number(row[stat] ?? 0) || 0;
  if (split === undefined) {
    const values = periods.map(() => 0);
    for (const row of rows) {
      const at = periodIndex.get(options.label(row[time])) ?? 0;
      values[at] = (values[at] ?? 0) + statOf(row);
    }
    return { periods, series: [{ name: options.statLabel, id: null, values }] };
  }
  // Per value of the split breakdown (keyed by its id when it has one, else by its name).
  const byKey = new Map<string, ChartSeries & { total: number }>();
  for (const row of rows) {
    const id = idOf(row[`${split}Id`]);
    const name = options.name(row[split]);
    const key = id === null ? `name:${name}` : `id:${id}`;
    let series = byKey.get(key);
    if (!series) {
      series = { name, id, values: periods.map(() => 0), total: 0 };
      byKey.set(key, series);
    }
    const at = periodIndex.get(options.label(row[time])) ?? 0;
    series.values[at] = (series.values[at] ?? 0) + statOf(row);
    series.total += statOf(row);
  }
  const ranked = [...byKey.values()].sort((a, b) => b.total - a.total || a.name.localeCompare(b.name));
  const top = ranked.slice(0, TOP_SERIES).map(({ total: _total, ...series }) => series);
  const rest = ranked.slice(TOP_SERIES);
  if (rest.length > 0) {
    top.push({
      name: `Other (${rest.length})`,
      id: null,
      values: periods.map((_, i) => rest.reduce((sum, s) => sum + (s.values[i] ?? 0), 0)),
    });
  }
  return { periods, series: top };
}
