// No imports, so the logic tests load it as it is. A table's order (DataTable's Sort).
interface Sort {
  by: string;
  direction: "asc" | "desc";
}

/** The usage page's address: which buckets, which key, and how each table is ordered. */
export interface UsageSearch {
  // `undefined` is allowed so a link can drop a parameter from the address.
  interval?: "day" | undefined;
  /** An API key's id: every figure narrows to the calls made with it. */
  key?: string | undefined;
  endpointSort?: string | undefined;
  keySort?: string | undefined;
}

// The API refuses ids longer than this (apiTokenId maxLength): a longer one never reaches it.
const MAX_KEY_ID = 100;
const SORTABLE = new Set(["label", "calls"]);

/** A table's order as written in the address, `calls.desc`; anything else is no order. */
export function parseSort(value: unknown): Sort | undefined {
  if (typeof value !== "string") return undefined;
  const [by, direction] = value.split(".");
  if (by === undefined || !SORTABLE.has(by) || (direction !== "asc" && direction !== "desc")) return undefined;
  return { by, direction };
}

export const writeSort = (sort: Sort) => `${sort.by}.${sort.direction}`;

export function validateUsageSearch(search: Record<string, unknown>): UsageSearch {
  const key = typeof search.key === "string" ? search.key.trim() : "";
  const endpointSort = parseSort(search.endpointSort);
  const keySort = parseSort(search.keySort);
  return {
    ...(search.interval === "day" ? { interval: "day" } : {}),
    ...(key !== "" && key.length <= MAX_KEY_ID ? { key } : {}),
    ...(endpointSort ? { endpointSort: writeSort(endpointSort) } : {}),
    ...(keySort ? { keySort: writeSort(keySort) } : {}),
  };
}
