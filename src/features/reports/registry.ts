import type { Queryable } from "../../platform/db/index.js";
import { ACCOUNT_METRICS, LINK_METRICS, runComposite } from "./composites.js";
import type { ReportMeta } from "./money.js";
import { DEFAULT_REPORT_LIMITS, type ParamDef, type ReportLimits } from "./params.js";
import { FIELDS, PERFORMANCE_PARAMS, runPerformance } from "./performance.js";
import { STATS } from "./stats.js";

export interface ReportResult {
  data: unknown;
  pagination: { offset: number; limit: number; total: number };
  meta: ReportMeta;
}

/**
 * One report, declared once: the HTTP route, its OpenAPI schema and the MCP tools all read this,
 * so they cannot drift apart.
 */
export interface ReportDefinition {
  name: string;
  title: string;
  description: string;
  /** Path under /api/v1. */
  path: string;
  parameters: ParamDef[];
  fields: { name: string; description: string }[];
  /**
   * Fields whose values visitors of tracking links choose (a tracker name from `?tracker=`, a
   * country from a header): MCP marks them as data, not instructions, and bounds their length.
   */
  visitorFields: string[];
  stats: { name: string; aliases: string[]; description: string }[];
  /**
   * Runs the report. `limits` come from the configuration of the app asking (the HTTP route, the
   * MCP tool); without them, REPORT_MAX_WINDOW_DAYS's default applies.
   */
  run(
    db: Queryable,
    tenantId: string,
    params: Record<string, unknown>,
    now: Date,
    limits?: ReportLimits,
  ): Promise<ReportResult>;
}

const describeStats = (filter: (s: (typeof STATS)[number]) => boolean = () => true) =>
  STATS.filter(filter).map(({ name, aliases, description }) => ({ name, aliases, description }));

export const REPORTS: ReportDefinition[] = [
  {
    name: "performance",
    title: "Performance report",
    description:
      "Clicks and conversions grouped by the requested fields over the window, exact to the instant (clicks by click time, " +
      "conversions by conversion time), read from the rollups. Unknown fields or stats are refused by name.",
    path: "/reports/events/performance",
    parameters: PERFORMANCE_PARAMS,
    fields: FIELDS.map(({ name, description }) => ({ name, description })),
    visitorFields: ["tracker", "country", "device", "os", "browser", "parameterA", "parameterB"],
    stats: describeStats(),
    run: (db, tenantId, params, now, limits = DEFAULT_REPORT_LIMITS) =>
      runPerformance(db, tenantId, params, now, limits),
  },
  {
    name: "account-metrics",
    title: "Accounts with metrics",
    description:
      "The tenant's accounts, each with `metrics` for metricsFrom..metricsTo and `comparisonMetrics` when both " +
      "comparison dates are given; sorted over the whole filtered set before paging. Accounts without traffic show zeros.",
    path: "/composites/accounts/metrics",
    parameters: ACCOUNT_METRICS.params,
    fields: [],
    visitorFields: [],
    stats: describeStats(),
    run: async (db, tenantId, params, now, limits = DEFAULT_REPORT_LIMITS) => {
      const { items, pagination, meta } = await runComposite(db, ACCOUNT_METRICS, tenantId, params, now, limits);
      return { data: items, pagination, meta };
    },
  },
  {
    name: "link-metrics",
    title: "Brand links with metrics",
    description:
      "The tenant's brand links, each with `metrics` and optional `comparisonMetrics`, like account-metrics one " +
      "level down; filter by accountId too.",
    path: "/composites/accounts/links/metrics",
    parameters: LINK_METRICS.params,
    fields: [],
    visitorFields: [],
    stats: describeStats(),
    run: async (db, tenantId, params, now, limits = DEFAULT_REPORT_LIMITS) => {
      const { items, pagination, meta } = await runComposite(db, LINK_METRICS, tenantId, params, now, limits);
      return { data: items, pagination, meta };
    },
  },
];

export function findReport(name: string): ReportDefinition | undefined {
  return REPORTS.find((r) => r.name === name.trim().toLowerCase());
}
