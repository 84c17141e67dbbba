import type { UseQueryResult } from "@tanstack/react-query";
import type { ReactNode } from "react";
import { type Column, DataTable } from "./DataTable";
import { type Page, Pager } from "./Pager";
import { ErrorState, Loading } from "./states";

interface HistoryListProps<D, Row> {
  /** The list's query: its rows and page are read from its data by `rowsOf`. */
  list: UseQueryResult<D>;
  rowsOf: (data: D) => { rows: Row[]; page: Page };
  /** Names the table for assistive technology. */
  caption: string;
  columns: Column<Row>[];
  rowKey: (row: Row) => string;
  /** What an empty list says: why it is empty, and what fills it. */
  empty: ReactNode;
  /** What loading says: "Loading deliveries…". */
  loading: string;
  /** The pager's name: "Deliveries". */
  pagerLabel: string;
  onOffset: (offset: number) => void;
  /** No pager while every row fits on one page (a panel within another page). */
  pagerOnlyWhenPaged?: boolean;
  /** Shown between the table and the pager (the details of the row opened). */
  children?: ReactNode;
}

/**
 * One history list for every place that lists what was sent (webhook deliveries, operational
 * messages, postbacks to a traffic source, Google Ads uploads, a conversion's postbacks, the
 * logs): loading, a refusal with a retry, the table, and the pager, the same way everywhere.
 */
export function HistoryList<D, Row>(props: HistoryListProps<D, Row>) {
  const { list, rowsOf, caption, columns, rowKey, empty, loading, pagerLabel, onOffset, pagerOnlyWhenPaged } = props;
  if (list.isPending) return <Loading label={loading} />;
  if (list.isError && list.data === undefined) {
    return <ErrorState error={list.error} onRetry={() => void list.refetch()} />;
  }
  if (list.data === undefined) return null;
  const { rows, page } = rowsOf(list.data);
  const paged = page.offset > 0 || page.total > page.limit;
  return (
    <>
      <DataTable caption={caption} columns={columns} rows={rows} rowKey={rowKey} empty={empty} />
      {props.children}
      {(!pagerOnlyWhenPaged || paged) && <Pager page={page} label={pagerLabel} onOffset={onOffset} />}
    </>
  );
}
