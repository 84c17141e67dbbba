import { buildCsv, type CsvCell } from "../../csv";
import type { ReportRow } from "./fetch-report";
import type { FieldName, StatName } from "./report-state";

const cellOf = (value: unknown): CsvCell =>
  typeof value === "number" || typeof value === "string"
    ? value
    : value === null || value === undefined
      ? null
      : String(value);

/**
 * The table as shown, as CSV: the columns by the API's names, the page's rows with the values the
 * API answered (numbers unformatted), and the totals row when there is one.
 */
export function reportCsv(
  fields: readonly FieldName[],
  stats: readonly StatName[],
  rows: readonly ReportRow[],
  totals: ReportRow | undefined,
  comparison?: { previousOf: (row: ReportRow) => ReportRow | null; totals: ReportRow | undefined },
): string {
  // With a comparison, each stat is followed by the previous period's figure (`clicks_previous`).
  const statColumns = stats.flatMap((s) => (comparison ? [s, `${s}_previous`] : [s]));
  const header = [...fields, ...statColumns];
  const statCells = (row: ReportRow, before: ReportRow | null | undefined) =>
    stats.flatMap((s) => (comparison ? [cellOf(row[s]), cellOf(before?.[s] ?? 0)] : [cellOf(row[s])]));
  const body = rows.map((row) => [
    ...fields.map((f) => cellOf(row[f])),
    ...statCells(row, comparison?.previousOf(row)),
  ]);
  if (totals && fields.length > 0) {
    body.push([...fields.map((_, i) => (i === 0 ? "Total" : null)), ...statCells(totals, comparison?.totals)]);
  }
  return buildCsv(header, body);
}
