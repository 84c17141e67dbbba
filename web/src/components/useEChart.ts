import { type ECharts, type EChartsCoreOption, init } from "echarts/core";
import { type DependencyList, type RefObject, useEffect, useRef } from "react";

/**
 * An ECharts canvas on the returned element's node: resized with it, disposed with it, and
 * drawn afresh from `option()` whenever `deps` change (a whole option, so nothing stale stays).
 * Each chart registers the ECharts parts it draws with `use`, so only those are bundled.
 */
export function useEChart(option: () => EChartsCoreOption, deps: DependencyList): RefObject<HTMLDivElement | null> {
  const element = useRef<HTMLDivElement>(null);
  const chart = useRef<ECharts | null>(null);

  useEffect(() => {
    if (!element.current) return;
    const instance = init(element.current, undefined, { renderer: "canvas" });
    chart.current = instance;
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
