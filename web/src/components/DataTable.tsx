import type { ReactNode } from "react";
import { Empty } from "./states";

export type SortDirection = "asc" | "desc";

export interface Sort {
  by: string;
  direction: SortDirection;
}

export interface Column<Row> {
  /** The column's key: what a sort names. */
  key: string;
  label: string;
  cell: (row: Row) => ReactNode;
  /** Numbers align right, so their digits line up. */
  numeric?: boolean;
  sortable?: boolean;
  /** The totals row's cell, when the table has one. */
  total?: ReactNode;
}

interface DataTableProps<Row> {
  caption: string;
  columns: Column<Row>[];
  rows: Row[];
  rowKey: (row: Row) => string;
  /** The current order and how to change it; without it no column sorts. */
  sort?: Sort;
  onSort?: (sort: Sort) => void;
  empty: ReactNode;
  /** Shows the columns' `total` cells in a footer row. */
  totals?: boolean;
}

const ariaSort = (sort: Sort | undefined, key: string) =>
  sort?.by === key ? (sort.direction === "asc" ? "ascending" : "descending") : "none";

/**
 * A table of rows, sortable by the columns that allow it: a click on a header sorts by it, a
 * second click reverses. The caption names the table for assistive technology.
 */
export function DataTable<Row>({ caption, columns, rows, rowKey, sort, onSort, empty, totals }: DataTableProps<Row>) {
  if (rows.length === 0) return <Empty>{empty}</Empty>;
  const toggle = (key: string) => {
    if (!onSort) return;
    const direction: SortDirection = sort?.by === key && sort.direction === "desc" ? "asc" : "desc";
    onSort({ by: key, direction });
  };
  return (
    // Focusable and named, so a keyboard can scroll a table wider than the screen (a phone).
    // biome-ignore lint/a11y/noNoninteractiveTabindex: a scrolling region must be reachable by keyboard (WCAG 2.1.1)
    <section className="table-wrap" tabIndex={0} aria-label={caption}>
      <table className="data-table">
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          <tr>
            {columns.map((column) => (
              <th
                key={column.key}
                scope="col"
                className={column.numeric ? "numeric" : undefined}
                aria-sort={column.sortable && onSort ? ariaSort(sort, column.key) : undefined}
              >
                {column.sortable && onSort ? (
                  <button type="button" className="sort-button" onClick={() => toggle(column.key)}>
                    {column.label}
                    <span aria-hidden="true" className="sort-mark">
                      {sort?.by === column.key ? (sort.direction === "asc" ? " ▲" : " ▼") : ""}
                    </span>
                  </button>
                ) : (
                  column.label
                )}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.map((row) => (
            <tr key={rowKey(row)}>
              {columns.map((column) => (
                <td key={column.key} className={column.numeric ? "numeric" : undefined}>
                  {column.cell(row)}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
        {totals && (
          <tfoot>
            <tr>
              {columns.map((column, index) => (
                <td key={column.key} className={column.numeric ? "numeric" : undefined}>
                  {index === 0 && column.total === undefined ? "Total" : column.total}
                </td>
              ))}
            </tr>
          </tfoot>
        )}
      </table>
    </section>
  );
}

/** Sorts rows in the browser (lists the API does not sort): numbers by value, the rest as text. */
export function sortRows<Row>(rows: Row[], sort: Sort | undefined, value: (row: Row, key: string) => unknown): Row[] {
  if (!sort) return rows;
  const factor = sort.direction === "asc" ? 1 : -1;
  return [...rows].sort((a, b) => {
    const x = value(a, sort.by);
    const y = value(b, sort.by);
    if (x === y) return 0;
    if (x === null || x === undefined) return 1;
    if (y === null || y === undefined) return -1;
    if (typeof x === "number" && typeof y === "number") return (x - y) * factor;
    return String(x).localeCompare(String(y)) * factor;
  });
}
