import { type ECharts, type EChartsCoreOption, init } from "echarts/core";
import { type DependencyList, type RefObject, useEffect, useRef } from "react";

/** What a click on a chart landed on: the series and the item (a bar) in it. */
export interface ChartItem {
  seriesIndex: number;
  dataIndex: number;
}

/**
 * An ECharts canvas on the returned element's node: resized with it, disposed with it, and
 * drawn afresh from `option()` whenever `deps` change (a whole option, so nothing stale stays).
 * Each chart registers the ECharts parts it draws with `use`, so only those are bundled.
 * `onClick` is told which series and bar a click landed on.
 */
export function useEChart(
  option: () => EChartsCoreOption,
  deps: DependencyList,
  onClick?: (item: ChartItem) => void,
): RefObject<HTMLDivElement | null> {
  const element = useRef<HTMLDivElement>(null);
  const chart = useRef<ECharts | null>(null);
  // The latest handler, read at the click: the chart is made once, the handler changes with the page.
  const click = useRef(onClick);
  click.current = onClick;

  useEffect(() => {
    if (!element.current) return;
    const instance = init(element.current, undefined, { renderer: "canvas" });
    chart.current = instance;
    instance.on("click", (params) => {
      const { seriesIndex, dataIndex } = params as { seriesIndex?: number; dataIndex?: number };
      if (seriesIndex !== undefined && dataIndex !== undefined) click.current?.({ seriesIndex, dataIndex });
    });
    const observer = new ResizeObserver(() => instance.resize());
    observer.observe(element.current);
    return () => {
      observer.disconnect();
      instance.dispose();
      chart.current = null;
    };
  }, []);

  useEffect(
    () => {
      chart.current?.setOption(option(), { notMerge: true });
    },
    // biome-ignore lint/correctness/useExhaustiveDependencies: the caller names what its option depends on, as for its own effect
    deps,
  );

  return element;
}
