import { formatInteger, formatMoney, formatPercent } from "../../format.js";
import { METRIC_LABELS } from "../../vocabulary.js";
import type { SortKey } from "./search.js";

/** The metrics every composite row carries (`metrics` and `comparisonMetrics`). */
export type MetricName =
  | "clicks"
  | "uniqueClicks"
  | "signups"
  | "firstTimeDeposit"
  | "qualifiers"
  | "deposits"
  | "depositAmount"
  | "cpaCommission"
  | "revShareCommission"
  | "flatFeeCommission"
  | "commission"
  | "conversionRate"
  | "epc";

export type Metrics = Record<MetricName, number>;

const money = (value: number, currency: string) => formatMoney(value, currency);

export interface MetricColumn {
  name: MetricName;
  label: string;
  /** The value as shown; amounts in `currency`, the answer's `meta.currency`. */
  format: (value: number, currency: string) => string;
  /** The API sorts by it (the composite `sortBy` list). */
  sortable: boolean;
}

const METRICS: Record<MetricName, MetricColumn> = {
  clicks: { name: "clicks", label: METRIC_LABELS.clicks, format: formatInteger, sortable: true },
  uniqueClicks: { name: "uniqueClicks", label: METRIC_LABELS.uniqueClicks, format: formatInteger, sortable: false },
  signups: { name: "signups", label: METRIC_LABELS.signups, format: formatInteger, sortable: true },
  firstTimeDeposit: {
    name: "firstTimeDeposit",
    label: METRIC_LABELS.firstTimeDeposit,
    format: formatInteger,
    sortable: true,
  },
  qualifiers: { name: "qualifiers", label: METRIC_LABELS.qualifiers, format: formatInteger, sortable: true },
  deposits: { name: "deposits", label: METRIC_LABELS.deposits, format: formatInteger, sortable: false },
  depositAmount: { name: "depositAmount", label: METRIC_LABELS.depositAmount, format: money, sortable: false },
  cpaCommission: { name: "cpaCommission", label: METRIC_LABELS.cpaCommission, format: money, sortable: true },
  revShareCommission: {
    name: "revShareCommission",
    label: METRIC_LABELS.revShareCommission,
    format: money,
    sortable: true,
  },
  flatFeeCommission: {
    name: "flatFeeCommission",
    label: METRIC_LABELS.flatFeeCommission,
    format: money,
    sortable: true,
  },
  commission: { name: "commission", label: METRIC_LABELS.commission, format: money, sortable: true },
  conversionRate: {
    name: "conversionRate",
    label: METRIC_LABELS.conversionRate,
    format: formatPercent,
    sortable: false,
  },
  // Cents a click: the API's 4 decimals, not rounded to the currency's.
  epc: {
    name: "epc",
    label: METRIC_LABELS.epc,
    format: (v, currency) => formatMoney(v, currency, { precise: true }),
    sortable: false,
  },
};

/** Shown always; the 1024 px layout has room for these beside the name. */
const DEFAULT_COLUMNS: MetricName[] = [
  "clicks",
  "signups",
  "firstTimeDeposit",
  "qualifiers",
  "commission",
  "conversionRate",
];

/** The metric columns shown: the defaults, plus the sort metric when it is not one of them. */
export function metricColumns(sortBy: SortKey): MetricColumn[] {
  const names = [...DEFAULT_COLUMNS];
  if (sortBy !== "name" && !names.includes(sortBy)) names.splice(names.length - 1, 0, sortBy);
  return names.map((name) => METRICS[name]);
}

/** What the "Sort by" control offers: every order the API has. */
export const SORT_OPTIONS: { key: SortKey; label: string }[] = [
  { key: "name", label: "Name" },
  ...Object.values(METRICS)
    .filter((m) => m.sortable)
    .map((m) => ({ key: m.name as SortKey, label: m.label })),
];
