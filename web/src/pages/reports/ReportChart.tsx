import { BarChart } from "echarts/charts";
import { GridComponent, LegendComponent, TooltipComponent } from "echarts/components";
import { use } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { useEChart } from "../../components/useEChart";
import type { ChartData } from "./chart-series";

// Only the parts drawn here are bundled (ECharts' tree-shakeable entry points).
use([BarChart, GridComponent, LegendComponent, TooltipComponent, CanvasRenderer]);

// Eleven distinct colours: ten series of their own and "Other" in grey, last.
const COLORS = [
  "#1d4ed8",
  "#f59e0b",
  "#059669",
  "#dc2626",
  "#7c3aed",
  "#0891b2",
  "#db2777",
  "#65a30d",
  "#ea580c",
  "#4f46e5",
];
const OTHER_COLOR = "#94a3b8";

interface ReportChartProps {
  data: ChartData;
  /** What the bars count, as the table's header says it. */
  statLabel: string;
  /** What a bar is: a day, a week, a month. */
  periodLabel: string;
  format: (value: number) => string;
  /** A period as the axis shows it, where the whole one is too long (an hour); the tooltip has it whole. */
  axisLabel?: (period: string) => string;
  /** A bar of a series with an id was clicked: narrow the report to it. */
  onPick?: ((seriesIndex: number) => void) | undefined;
}

/**
 * One stat per period of the time breakdown, as bars in time order: one series, or stacked, one
 * per value of the breakdown beside the time one (the ten largest and "Other").
 */
export default function ReportChart({ data, statLabel, periodLabel, format, axisLabel, onPick }: ReportChartProps) {
  const split = data.series.length > 1 || (data.series[0] !== undefined && data.series[0].name !== statLabel);
  const element = useEChart(
    () => ({
      animation: false,
      grid: { left: 64, right: 24, top: split ? 56 : 24, bottom: 32 },
      tooltip: { trigger: "axis", valueFormatter: (value: unknown) => format(Number(value)) },
      ...(split ? { legend: { type: "scroll", top: 0 } } : {}),
      xAxis: {
        type: "category",
        data: data.periods,
        ...(axisLabel ? { axisLabel: { formatter: axisLabel } } : {}),
      },
      yAxis: {
        type: "value",
        name: split ? "" : statLabel,
        axisLabel: { formatter: (value: number) => format(value) },
      },
      series: data.series.map((s, i) => ({
        name: s.name,
        type: "bar",
        stack: split ? "total" : undefined,
        data: s.values,
        color: s.id === null && split && i === data.series.length - 1 ? OTHER_COLOR : COLORS[i % COLORS.length],
        cursor: onPick && s.id !== null ? "pointer" : "default",
      })),
    }),
    [data, statLabel, format, axisLabel, split, onPick],
    // A click on a bar of a value with an id narrows the report to it, as a row's value does.
    (item) => {
      if (data.series[item.seriesIndex]?.id != null) onPick?.(item.seriesIndex);
    },
  );
  const first = data.periods[0];
  const last = data.periods.at(-1);
  const label = split
    ? `Chart of ${statLabel.toLowerCase()} per ${periodLabel} from ${first} to ${last}, ${data.periods.length} bars, stacked by ${data.series.length} series: ${data.series.map((s) => s.name).join(", ")}.`
    : `Chart of ${statLabel.toLowerCase()} per ${periodLabel} from ${first} to ${last}, ${data.periods.length} bars.`;
  return <div ref={element} className="chart" role="img" aria-label={label} />;
}
