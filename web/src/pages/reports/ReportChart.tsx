import { BarChart } from "echarts/charts";
import { GridComponent, TooltipComponent } from "echarts/components";
import { use } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { useEChart } from "../../components/useEChart";

// Only the parts drawn here are bundled (ECharts' tree-shakeable entry points).
use([BarChart, GridComponent, TooltipComponent, CanvasRenderer]);

export interface ChartPoint {
  period: string;
  value: number;
}

interface ReportChartProps {
  points: ChartPoint[];
  /** What the bars count, as the table's header says it. */
  statLabel: string;
  /** What a bar is: a day, a week, a month. */
  periodLabel: string;
  format: (value: number) => string;
  /** A period as the axis shows it, where the whole one is too long (an hour); the tooltip has it whole. */
  axisLabel?: (period: string) => string;
}

/** One stat per period of the time breakdown, as bars, in time order. */
export default function ReportChart({ points, statLabel, periodLabel, format, axisLabel }: ReportChartProps) {
  const element = useEChart(
    () => ({
      animation: false,
      grid: { left: 64, right: 24, top: 24, bottom: 32 },
      tooltip: { trigger: "axis", valueFormatter: (value: unknown) => format(Number(value)) },
      xAxis: {
        type: "category",
        data: points.map((p) => p.period),
        ...(axisLabel ? { axisLabel: { formatter: axisLabel } } : {}),
      },
      yAxis: { type: "value", name: statLabel, axisLabel: { formatter: (value: number) => format(value) } },
      series: [{ name: statLabel, type: "bar", data: points.map((p) => p.value), color: "#1d4ed8" }],
    }),
    [points, statLabel, format, axisLabel],
  );

  const first = points[0]?.period;
  const last = points.at(-1)?.period;
  const label = `Chart of ${statLabel.toLowerCase()} per ${periodLabel} from ${first} to ${last}, ${points.length} bars.`;
  return <div ref={element} className="chart" role="img" aria-label={label} />;
}
