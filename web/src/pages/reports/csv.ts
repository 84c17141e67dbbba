/**
 * CSV (RFC 4180) of what a table shows, built in the browser from the API's answer. No imports,
 * so the logic tests can load it as it is.
 */

export type CsvCell = string | number | null | undefined;

// A spreadsheet runs a text cell that starts with one of these as a formula (CSV injection).
const FORMULA_START = /^[=+\-@\t\r]/;

/**
 * One cell: numbers as they are (a negative amount stays a number), text that a spreadsheet would
 * read as a formula prefixed with an apostrophe, and quoted when it holds a quote, a comma or a
 * line break (quotes doubled).
 */
export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  const text = FORMULA_START.test(value) ? `'${value}` : value;
  return /[",\r\n]/.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The whole file: a header line, then the rows, lines ended by CRLF. It starts with a byte order
 * mark, without which Excel reads UTF-8 names (Zürich, Malmö) as Latin-1.
 */
export function buildCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  const lines = [header, ...rows].map((row) => row.map(csvCell).join(","));
  return `\uFEFF${lines.join("\r\n")}\r\n`;
}
