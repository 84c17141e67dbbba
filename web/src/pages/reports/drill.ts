/**
 * Drill-down: a row's value of the first breakdown becomes that breakdown's filter and the report
 * moves on to the next breakdown, all in the address, so the browser's Back returns to the wider
 * report. Only breakdowns with an id filter narrow this way (dates, countries and types do not).
 */
import type { FieldName, FilterName, ReportState } from "./report-state.js";

const FILTER_OF: Partial<Record<FieldName, FilterName>> = {
  brand: "brandId",
  program: "programId",
  account: "accountId",
  link: "linkId",
  trafficSource: "trafficSourceId",
  tracker: "trackerId",
};

/**
 * The filter a click on a row's value of the first breakdown sets, if it can narrow the report:
 * an entity breakdown's row carries the name under the field and the id under `<field>Id`.
 */
export function drillFilter(
  state: ReportState,
  row: Record<string, unknown>,
): { name: FilterName; id: number } | undefined {
  const first = state.fields[0];
  const name = first && FILTER_OF[first];
  const value = name ? row[name] : undefined;
  const id = Number(value);
  if (!name || value === null || value === "" || !Number.isSafeInteger(id) || id < 1) return undefined;
  return { name, id };
}

/** The report narrowed to one value of its first breakdown, on the next breakdown when there is one. */
export function drillInto(state: ReportState, row: Record<string, unknown>): ReportState | undefined {
  const filter = drillFilter(state, row);
  if (!filter) return undefined;
  const fields = state.fields.length > 1 ? state.fields.slice(1) : state.fields;
  const { sort: _sort, ...rest } = state;
  return { ...rest, fields, filters: { ...state.filters, [filter.name]: filter.id }, offset: 0 };
}

/**
 * The report narrowed to one value of `field` (a chart series' value, by its id): that field's
 * filter set and the field left out of the breakdowns, so the chart shows that value alone.
 * Undefined when the field has no id filter (dates, countries, types).
 */
export function narrowTo(state: ReportState, field: FieldName, id: number): ReportState | undefined {
  const name = FILTER_OF[field];
  if (!name) return undefined;
  const fields = state.fields.length > 1 ? state.fields.filter((f) => f !== field) : state.fields;
  const { sort: _sort, ...rest } = state;
  return { ...rest, fields, filters: { ...state.filters, [name]: id }, offset: 0 };
}
