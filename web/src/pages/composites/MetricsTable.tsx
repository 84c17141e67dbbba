import type { ReactNode } from "react";
import { type Column, DataTable } from "../../components/DataTable";
import { formatChange } from "../../format";
import { type MetricColumn, type Metrics, metricColumns } from "./metrics";
import { type Direction, SORT_KEYS, type SortKey, type SortState } from "./search";

/** A row of either composite endpoint: an account or a link, with both periods' metrics. */
export interface CompositeRow {
  id: number;
  name: string;
  metrics: Metrics;
  comparisonMetrics?: Metrics;
}

/** One metric of one row: its value, the comparison period's, and the change between them. */
function MetricCell({ column, row, currency }: { column: MetricColumn; row: CompositeRow; currency: string }) {
  const value = row.metrics[column.name];
  const previous = row.comparisonMetrics?.[column.name];
  const change = previous === undefined ? null : formatChange(value, previous);
  return (
    <span className="metric" data-metric={column.name} data-value={value} data-previous={previous ?? ""}>
      <span className="metric-value">{column.format(value, currency)}</span>
      {previous !== undefined && (
        <span className="metric-compare">
          <span className="visually-hidden">, </span>was {column.format(previous, currency)}
        </span>
      )}
      {change && change !== "no change" && (
        <span className={`metric-change ${change.startsWith("-") ? "down" : change.startsWith("+") ? "up" : ""}`}>
          <span className="visually-hidden">, change </span>
          {change}
        </span>
      )}
    </span>
  );
}

const isSortKey = (key: string): key is SortKey => (SORT_KEYS as readonly string[]).includes(key);

interface MetricsTableProps<Row extends CompositeRow> {
  caption: string;
  rows: Row[];
  /** The name column's cell: a link, with what else identifies the row. */
  nameCell: (row: Row) => ReactNode;
  nameLabel: string;
  sort: SortState;
  onSort: (sort: SortState) => void;
  empty: ReactNode;
  /** What the amounts are in: the answer's `meta.currency`. */
  currency: string;
}

/** Accounts or links with each metric beside its comparison value, sorted by the API. */
export function MetricsTable<Row extends CompositeRow>({
  caption,
  rows,
  nameCell,
  nameLabel,
  sort,
  onSort,
  empty,
  currency,
}: MetricsTableProps<Row>) {
  const columns: Column<Row>[] = [
    { key: "name", label: nameLabel, cell: nameCell, sortable: true },
    ...metricColumns(sort.by).map(
      (metric): Column<Row> => ({
        key: metric.name,
        label: metric.label,
        numeric: true,
        sortable: metric.sortable,
        cell: (row) => <MetricCell column={metric} row={row} currency={currency} />,
      }),
    ),
  ];
  return (
    <div className="composite-table">
      <DataTable
        caption={caption}
        columns={columns}
        rows={rows}
        rowKey={(row) => String(row.id)}
        sort={{ by: sort.by, direction: sort.direction }}
        onSort={(next) => {
          if (isSortKey(next.by)) onSort({ by: next.by, direction: next.direction as Direction });
        }}
        empty={empty}
      />
    </div>
  );
}
