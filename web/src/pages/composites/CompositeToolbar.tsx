import { type FormEvent, useEffect, useState } from "react";
import { SORT_OPTIONS } from "./metrics";
import { type AccountStatus, type Direction, SORT_KEYS, type SortKey, type SortState } from "./search";

interface ToolbarProps {
  /** What the search looks in, for its label: "account name". */
  searchLabel: string;
  q: string | undefined;
  onSearch: (q: string | undefined) => void;
  sort: SortState;
  onSort: (sort: SortState) => void;
  /** Offered where the rows are accounts (the API filters by account status). */
  status?: { value: AccountStatus | undefined; onChange: (status: AccountStatus | undefined) => void };
}

const isSortKey = (key: string): key is SortKey => (SORT_KEYS as readonly string[]).includes(key);

/** Search by name, the order (every order the API offers, both ways) and the status filter. */
export function CompositeToolbar({ searchLabel, q, onSearch, sort, onSort, status }: ToolbarProps) {
  const [text, setText] = useState(q ?? "");
  useEffect(() => setText(q ?? ""), [q]);

  function search(event: FormEvent) {
    event.preventDefault();
    const trimmed = text.trim();
    onSearch(trimmed === "" ? undefined : trimmed);
  }

  return (
    <div className="toolbar composite-toolbar">
      <form className="search-form" onSubmit={search}>
        <div className="field">
          <label htmlFor="composite-search">Search {searchLabel}</label>
          <input
            id="composite-search"
            type="search"
            value={text}
            maxLength={200}
            onChange={(e) => setText(e.target.value)}
          />
        </div>
        <button type="submit" className="button secondary">
          Search
        </button>
      </form>
      <div className="field">
        <label htmlFor="composite-sort">Sort by</label>
        <select
          id="composite-sort"
          value={sort.by}
          onChange={(e) => {
            const by = e.target.value;
            if (isSortKey(by)) onSort({ by, direction: by === "name" ? "asc" : "desc" });
          }}
        >
          {SORT_OPTIONS.map((option) => (
            <option key={option.key} value={option.key}>
              {option.label}
            </option>
          ))}
        </select>
      </div>
      <div className="field">
        <label htmlFor="composite-direction">Order</label>
        <select
          id="composite-direction"
          value={sort.direction}
          onChange={(e) => onSort({ by: sort.by, direction: e.target.value as Direction })}
        >
          <option value="desc">{sort.by === "name" ? "Z to A" : "Highest first"}</option>
          <option value="asc">{sort.by === "name" ? "A to Z" : "Lowest first"}</option>
        </select>
      </div>
      {status && (
        <div className="field">
          <label htmlFor="composite-status">Account status</label>
          <select
            id="composite-status"
            value={status.value ?? ""}
            onChange={(e) => {
              const value = e.target.value;
              status.onChange(value === "active" || value === "inactive" ? value : undefined);
            }}
          >
            <option value="">Any</option>
            <option value="active">Active</option>
            <option value="inactive">Inactive</option>
          </select>
        </div>
      )}
    </div>
  );
}
