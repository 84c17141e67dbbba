import { BarChart, LineChart } from "echarts/charts";
import { GridComponent, LegendComponent, TooltipComponent } from "echarts/components";
import { use } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { formatInteger } from "../format";
import { useEChart } from "./useEChart";

// Only the parts drawn here are bundled (ECharts' tree-shakeable entry points).
use([LineChart, BarChart, GridComponent, TooltipComponent, LegendComponent, CanvasRenderer]);

interface Point {
  day: string;
  clicks: number;
  signups: number;
}

/** Clicks (line, left axis) and conversions (bars, right axis) per day of the report's time zone. */
export default function DailyChart({ points }: { points: Point[] }) {
  const element = useEChart(
    () => ({
      animation: false,
      grid: { left: 56, right: 48, top: 40, bottom: 32 },
      legend: { top: 0 },
      tooltip: { trigger: "axis" },
      xAxis: { type: "category", data: points.map((p) => p.day.slice(5)) },
      yAxis: [
        { type: "value", name: "Clicks", minInterval: 1 },
        { type: "value", name: "Conversions", minInterval: 1, splitLine: { show: false } },
      ],
      series: [
        { name: "Clicks", type: "line", data: points.map((p) => p.clicks), color: "#1d4ed8", showSymbol: false },
        { name: "Conversions", type: "bar", yAxisIndex: 1, data: points.map((p) => p.signups), color: "#16a34a" },
      ],
    }),
    [points],
  );

  const clicks = points.reduce((sum, p) => sum + p.clicks, 0);
  const signups = points.reduce((sum, p) => sum + p.signups, 0);
  const label = `Chart of daily clicks and conversions from ${points[0]?.day} to ${points.at(-1)?.day}: ${formatInteger(clicks)} clicks and ${formatInteger(signups)} conversions in all.`;
  return <div ref={element} className="chart" role="img" aria-label={label} />;
}
