/**
 * CSV (RFC 4180) of what a table shows, built in the browser from the API's answer, and its
 * download: one writer for the reports and the conversions list. No imports, so the logic tests
 * can load it as it is.
 */

export type CsvCell = string | number | null | undefined;

// A spreadsheet runs a text cell that starts with one of these as a formula (CSV injection), the
// full-width forms too (East Asian input methods type them, and spreadsheets take them as the
// ASCII ones).
const FORMULA = "=+\\-@\\t\\r\\uFF1D\\uFF0B\\uFF0D\\uFF20";

// A formula start where a reader may begin a cell: at the start of the text, or after a separator
// of any locale or a line break inside it (spaces and quotes between). Quoting keeps a cell whole
// only for a reader that splits on the separator this file uses: one that splits on `;` (where the
// comma is the decimal mark) reads `a,"x;=1+2"` as `a,"x` and `=1+2"`, so every such start inside
// the text is neutralised too.
const FORMULA_START = new RegExp(`(^|[,;\\t\\r\\n])([ "]*)(?=[${FORMULA}])`, "g");

// What makes a reader cut or end a cell in some locale: the comma, the semicolon, the tab, a quote,
// a line break.
const NEEDS_QUOTES = /[",;\t\r\n]/;

/**
 * One cell: numbers as they are (a negative amount stays a number); text with an apostrophe put
 * before every formula start a spreadsheet could see, and quoted when it holds a separator of any
 * locale, a quote or a line break (quotes doubled). `x;=1+2` is written `"x;'=1+2"`: one cell where
 * `,` separates, and no formula where `;` does.
 */
export function csvCell(value: CsvCell): string {
  if (value === null || value === undefined) return "";
  if (typeof value === "number") return Number.isFinite(value) ? String(value) : "";
  const text = value.replace(FORMULA_START, "$1$2'");
  return NEEDS_QUOTES.test(text) ? `"${text.replace(/"/g, '""')}"` : text;
}

/**
 * The whole file: a header line, then the rows, lines ended by CRLF. It starts with a byte order
 * mark, without which Excel reads UTF-8 names (Zürich, Malmö) as Latin-1.
 */
export function buildCsv(header: readonly string[], rows: readonly (readonly CsvCell[])[]): string {
  const lines = [header, ...rows].map((row) => row.map(csvCell).join(","));
  return `\uFEFF${lines.join("\r\n")}\r\n`;
}

/** Hands the file to the browser's download (a link to an object URL, released afterwards). */
export function saveFile(name: string, text: string, type: string): void {
  const url = URL.createObjectURL(new Blob([text], { type }));
  const link = document.createElement("a");
  link.href = url;
  link.download = name;
  document.body.append(link);
  link.click();
  link.remove();
  // Released once the download has started with it.
  setTimeout(() => URL.revokeObjectURL(url), 10_000);
}
