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
): string {
  const header = [...fields, ...stats];
  const body = rows.map((row) => header.map((column) => cellOf(row[column])));
  if (totals && fields.length > 0) {
    body.push([...fields.map((_, i) => (i === 0 ? "Total" : null)), ...stats.map((s) => cellOf(totals[s]))]);
  }
  return buildCsv(header, body);
}
