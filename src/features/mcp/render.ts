/** A readable text rendering of a report's data, beside the structured content. */
const MAX_ROWS = 50;

type Cell = string | number | boolean | null;

function cell(value: unknown): Cell {
  if (value === null || value === undefined) return null;
  if (typeof value === "string" || typeof value === "number" || typeof value === "boolean") return value;
  return JSON.stringify(value);
}

/** Flattens `{ metrics: { clicks } }` into `metrics.clicks`, so every value is one column. */
function flatten(row: Record<string, unknown>, prefix = ""): Record<string, Cell> {
  const out: Record<string, Cell> = {};
  for (const [key, value] of Object.entries(row)) {
    if (value !== null && typeof value === "object" && !Array.isArray(value)) {
      Object.assign(out, flatten(value as Record<string, unknown>, `${prefix}${key}.`));
    } else out[`${prefix}${key}`] = cell(value);
  }
  return out;
}

function table(columns: string[], rows: Cell[][]): string {
  const shown = rows.slice(0, MAX_ROWS);
  const lines = [
    `| ${columns.join(" | ")} |`,
    `| ${columns.map(() => "---").join(" | ")} |`,
    ...shown.map((row) => `| ${row.map((v) => (v === null ? "" : String(v))).join(" | ")} |`),
  ];
  if (rows.length > shown.length) lines.push(`(${rows.length - shown.length} more rows not shown)`);
  return lines.join("\n");
}

export function renderData(data: unknown, pagination: { offset: number; limit: number; total: number }): string {
  const footer = `${pagination.total} rows in all; this page starts at offset ${pagination.offset} (limit ${pagination.limit}).`;
  if (Array.isArray(data)) {
    if (data.length === 0) return `No rows. ${footer}`;
    const rows = data.map((row) => flatten(row as Record<string, unknown>));
    const columns = [...new Set(rows.flatMap((row) => Object.keys(row)))];
    return `${table(
      columns,
      rows.map((row) => columns.map((c) => row[c] ?? null)),
    )}\n${footer}`;
  }
  const tabular = data as { columns: string[]; rows: unknown[][] };
  return `${table(
    tabular.columns,
    tabular.rows.map((row) => row.map(cell)),
  )}\n${footer}`;
}
