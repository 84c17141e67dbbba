import { BarChart } from "echarts/charts";
import { GridComponent, TooltipComponent } from "echarts/components";
import { use } from "echarts/core";
import { CanvasRenderer } from "echarts/renderers";
import { useEChart } from "../../components/useEChart";

// Only the parts drawn here are bundled (ECharts' tree-shakeable entry points).
use([BarChart, GridComponent, TooltipComponent, CanvasRenderer]);

export interface Bar {
  label: string;
  value: number;
  /** A bar drawn apart from the others (the rate-limited calls). */
  color?: string;
}

interface BarsChartProps {
  bars: Bar[];
  /** What the chart shows, in words: its accessible name. */
  description: string;
  seriesName: string;
  color: string;
  /** Bars across, categories down: for a few long labels. */
  horizontal?: boolean;
}

/** One bar per category (an hour, a day, a status class), counts on the axis. */
export default function BarsChart({ bars, description, seriesName, color, horizontal = false }: BarsChartProps) {
  const element = useEChart(
    () => ({
      animation: false,
      grid: { left: 16, right: 24, top: 24, bottom: 8, containLabel: true },
      tooltip: { trigger: "axis" },
      [horizontal ? "yAxis" : "xAxis"]: {
        type: "category",
        data: bars.map((b) => b.label),
        axisTick: { alignWithLabel: true },
        // Every category named, top to bottom when across.
        ...(horizontal ? { inverse: true, axisLabel: { interval: 0 } } : {}),
      },
      [horizontal ? "xAxis" : "yAxis"]: {
        type: "value",
        minInterval: 1,
        // A narrow panel fits few figures across.
        splitNumber: horizontal ? 3 : 5,
        axisLabel: { hideOverlap: true },
      },
      series: [
        {
          name: seriesName,
          type: "bar",
          color,
          data: bars.map((b) => (b.color ? { value: b.value, itemStyle: { color: b.color } } : b.value)),
        },
      ],
    }),
    [bars, seriesName, color, horizontal],
  );

  return <div ref={element} className="chart usage-chart" role="img" aria-label={description} />;
}
