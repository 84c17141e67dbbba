/**
 * A report row's clicks: the click log narrowed to what the row is (its link, traffic source,
 * tracker, country or device type, from the row or the report's filters) over the report's window, in the
 * click log's address. The click log reads at most 31 days: a longer window keeps its last 31.
 */
import { DAY_MS } from "../../dates.js";
import { DEVICES, type Device } from "../logs/search.js";
import type { ReportClock, ReportState } from "./report-state.js";
import { windowQuery } from "./report-state.js";

/** The click log's longest window, in days (the API's bound). */
const CLICK_LOG_DAYS = 31;

export interface ClicksSearch {
  from?: string;
  to?: string;
  link?: number;
  source?: number;
  tracker?: number;
  country?: string;
  device?: Device;
}

const idIn = (value: unknown): number | undefined => {
  const id = Number(value);
  return value !== null && value !== undefined && value !== "" && Number.isSafeInteger(id) && id > 0 ? id : undefined;
};

const dayOf = (bound: string | undefined) =>
  bound && /^\d{4}-\d{2}-\d{2}/.test(bound) ? bound.slice(0, 10) : undefined;

export function clicksSearch(state: ReportState, at: ReportClock, row: Record<string, unknown>): ClicksSearch {
  const { conversionDateFrom, conversionDateTo } = windowQuery(state, at);
  const to = dayOf(conversionDateTo);
  let from = dayOf(conversionDateFrom);
  if (from && to) {
    const earliest = new Date(Date.parse(`${to}T00:00:00Z`) - (CLICK_LOG_DAYS - 1) * DAY_MS).toISOString().slice(0, 10);
    if (from < earliest) from = earliest;
  }
  // A row of one day narrows to that day.
  const date = typeof row.date === "string" && /^\d{4}-\d{2}-\d{2}$/.test(row.date) ? row.date : undefined;
  const country = typeof row.country === "string" && /^[A-Z]{2}$/.test(row.country) ? row.country : undefined;
  const device = DEVICES.find((d) => d === row.device);
  const link = idIn(row.linkId) ?? state.filters.linkId;
  const source = idIn(row.trafficSourceId) ?? state.filters.trafficSourceId;
  const tracker = idIn(row.trackerId) ?? state.filters.trackerId;
  return {
    ...(date ? { from: date, to: date } : { ...(from ? { from } : {}), ...(to ? { to } : {}) }),
    ...(link ? { link } : {}),
    ...(source ? { source } : {}),
    ...(tracker ? { tracker } : {}),
    ...(country ? { country } : {}),
    ...(device ? { device } : {}),
  };
}
