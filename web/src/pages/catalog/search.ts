import { ACCOUNT_STATUSES, type EntitySpec, type FilterName } from "./entities.js";

/** A catalog list's URL state: what the API's list query takes (search, paging, filters). */
export interface ListSearch {
  search?: string | undefined;
  offset?: number | undefined;
  brandId?: number | undefined;
  programId?: number | undefined;
  accountId?: number | undefined;
  status?: (typeof ACCOUNT_STATUSES)[number] | undefined;
}

/** The link generator's URL state: the chosen link, source and tracker (an id or a new name). */
export interface GeneratorSearch {
  link?: number | undefined;
  source?: number | undefined;
  trackerId?: number | undefined;
  trackerName?: string | undefined;
}

/** Catalog ids are positive safe integers; the router hands numbers over already parsed. */
export function catalogId(value: unknown): number | undefined {
  const n = typeof value === "string" && /^\d{1,16}$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n >= 1 ? n : undefined;
}

/** Free text from the URL; the router reads `?search=42` as a number, which is still text here. */
function text(value: unknown, max: number): string | undefined {
  if (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean") return undefined;
  const s = String(value).trim();
  return s === "" ? undefined : s.slice(0, max);
}

/** A page's first row; the first page has none (so its address stays short). */
function offsetOf(value: unknown): number | undefined {
  const n = typeof value === "string" && /^\d{1,16}$/.test(value) ? Number(value) : value;
  return typeof n === "number" && Number.isSafeInteger(n) && n > 0 ? n : undefined;
}

function drop<T extends object>(search: T): T {
  return Object.fromEntries(Object.entries(search).filter(([, v]) => v !== undefined)) as T;
}

export function parseListSearch(search: Record<string, unknown>): ListSearch {
  const status = ACCOUNT_STATUSES.find((s) => s === search.status);
  return drop({
    search: text(search.search, 200),
    offset: offsetOf(search.offset),
    brandId: catalogId(search.brandId),
    programId: catalogId(search.programId),
    accountId: catalogId(search.accountId),
    status,
  });
}

export function parseGeneratorSearch(search: Record<string, unknown>): GeneratorSearch {
  const trackerId = catalogId(search.trackerId);
  return drop({
    link: catalogId(search.link),
    source: catalogId(search.source),
    trackerId,
    // One tracker at a time: an id wins over a name.
    trackerName: trackerId === undefined ? text(search.trackerName, 200) : undefined,
  });
}

/** The filters of the URL that this list offers (another list's filter is ignored). */
export function filtersOf(spec: EntitySpec, search: ListSearch): Pick<ListSearch, FilterName> {
  const names = new Set<string>(spec.filters.map((f) => f.name));
  return drop(Object.fromEntries(Object.entries(search).filter(([name]) => names.has(name))));
}

/** The tracker as the API's `tracker` parameter takes it: digits are an id, anything else a name. */
export function trackerParam(search: GeneratorSearch): string | undefined {
  return search.trackerId !== undefined ? String(search.trackerId) : search.trackerName;
}
