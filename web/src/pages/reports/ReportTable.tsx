import { Link } from "@tanstack/react-router";
import { type Column, DataTable, type Sort } from "../../components/DataTable";
import { formatChange } from "../../format";
import type { ClicksSearch } from "./clicks-link";
import type { ReportRow } from "./fetch-report";
import { FIELD_LABELS, fieldInSentence, formatField, formatStat, STAT_LABELS } from "./labels";
import type { FieldName, ReportSort, StatName } from "./report-state";

interface Indexed {
  index: number;
  row: ReportRow;
}

interface ReportTableProps {
  fields: FieldName[];
  stats: StatName[];
  rows: ReportRow[];
  /** The API's answer without breakdowns; absent without fields (the one row is the total). */
  totals: ReportRow | undefined;
  sort: ReportSort | undefined;
  onSort: (sort: ReportSort) => void;
  /** What the rows' amounts are in: their answer's `meta.currency`. */
  currency: string;
  /** What the totals' amounts are in, when the totals are an answer of their own. */
  totalsCurrency?: string | undefined;
  /** Narrows the report to a value of the first breakdown, when that value can be a filter. */
  onDrill?: ((row: ReportRow) => void) | undefined;
  /** Whether the row's value of the first breakdown can narrow the report. */
  canDrill?: ((row: ReportRow) => boolean) | undefined;
  /** With a comparison: the previous period's row of a row's breakdown values (none: nothing then). */
  previousOf?: ((row: ReportRow) => ReportRow | null) | undefined;
  /** With a comparison: the previous period's totals. */
  previousTotals?: ReportRow | undefined;
  /** The click log's address for a row's clicks: a last column links each row there. */
  clicksOf?: ((row: ReportRow) => ClicksSearch) | undefined;
}

/** A figure's change against the previous period's, and that figure: "+12.5% vs 1,204". */
function Change({ stat, now, before, currency }: { stat: StatName; now: unknown; before: unknown; currency: string }) {
  const previous = Number(before ?? 0);
  return (
    <span className="report-change" data-previous={before === null || before === undefined ? "" : String(before)}>
      {formatChange(Number(now ?? 0), previous)}{" "}
      <span className="muted">vs {formatStat(stat, before ?? 0, currency)}</span>
    </span>
  );
}

/** A value as shown, carrying the API's own value for whoever reads the page's data. */
const Value = ({ raw, children }: { raw: unknown; children: string }) => (
  <span data-value={raw === null || raw === undefined ? "" : String(raw)}>{children}</span>
);

/** The report's rows as the API sorted and paged them, with its totals in the footer. */
export function ReportTable({
  fields,
  stats,
  rows,
  totals,
  sort,
  onSort,
  currency,
  totalsCurrency = currency,
  onDrill,
  canDrill,
  previousOf,
  previousTotals,
  clicksOf,
}: ReportTableProps) {
  const columns: Column<Indexed>[] = [
    ...fields.map(
      (field, i): Column<Indexed> => ({
        key: field,
        label: FIELD_LABELS[field],
        sortable: true,
        cell: ({ row }) => {
          const shown = <Value raw={row[field]}>{formatField(field, row[field])}</Value>;
          if (i > 0 || !onDrill || !canDrill?.(row)) return shown;
          return (
            <button
              type="button"
              className="link-button report-drill"
              onClick={() => onDrill(row)}
              title={`Narrow the report to this ${fieldInSentence(field)}`}
            >
              {shown}
            </button>
          );
        },
        ...(totals ? { total: i === 0 ? "Total" : "" } : {}),
      }),
    ),
    ...stats.map(
      (stat): Column<Indexed> => ({
        key: stat,
        label: STAT_LABELS[stat],
        numeric: true,
        // One row of totals has nothing to sort.
        sortable: fields.length > 0,
        cell: ({ row }) => {
          const value = <Value raw={row[stat]}>{formatStat(stat, row[stat], currency)}</Value>;
          if (!previousOf) return value;
          const before = previousOf(row);
          return (
            <>
              {value}
              <Change stat={stat} now={row[stat]} before={before?.[stat] ?? 0} currency={currency} />
            </>
          );
        },
        ...(totals
          ? {
              total: (
                <>
                  <Value raw={totals[stat]}>{formatStat(stat, totals[stat], totalsCurrency)}</Value>
                  {previousTotals && (
                    <Change stat={stat} now={totals[stat]} before={previousTotals[stat]} currency={totalsCurrency} />
                  )}
                </>
              ),
            }
          : {}),
      }),
    ),
    ...(clicksOf
      ? [
          {
            key: "click-log",
            label: "Click log",
            cell: ({ row }: Indexed) => (
              <Link to="/clicks" search={clicksOf(row)} className="report-clicks">
                Clicks
              </Link>
            ),
            ...(totals ? { total: "" } : {}),
          } satisfies Column<Indexed>,
        ]
      : []),
  ];
  // Without a sort asked for, the API orders by the breakdowns in turn, ascending.
  const first = fields[0];
  const shown: Sort | undefined = sort
    ? { by: sort.key, direction: sort.direction }
    : first
      ? { by: first, direction: "asc" }
      : undefined;
  return (
    <DataTable
      caption={`Performance by ${fields.length > 0 ? fields.map((f) => FIELD_LABELS[f]).join(", ") : "nothing: totals"}`}
      columns={columns}
      rows={rows.map((row, index) => ({ index, row }))}
      rowKey={({ index }) => String(index)}
      {...(shown ? { sort: shown } : {})}
      onSort={(next) => onSort({ key: next.by as ReportSort["key"], direction: next.direction })}
      empty="No clicks or conversions match this report's window and filters."
      totals={totals !== undefined && fields.length > 0}
    />
  );
}
