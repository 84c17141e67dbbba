import { compact, positiveIntParam, textParam } from "../../search-params.js";
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
export const catalogId = positiveIntParam;

export function parseListSearch(search: Record<string, unknown>): ListSearch {
  const status = ACCOUNT_STATUSES.find((s) => s === search.status);
  return compact({
    search: textParam(search.search, 200),
    offset: positiveIntParam(search.offset),
    brandId: catalogId(search.brandId),
    programId: catalogId(search.programId),
    accountId: catalogId(search.accountId),
    status,
  });
}

export function parseGeneratorSearch(search: Record<string, unknown>): GeneratorSearch {
  const trackerId = catalogId(search.trackerId);
  return compact({
    link: catalogId(search.link),
    source: catalogId(search.source),
    trackerId,
    // One tracker at a time: an id wins over a name.
    trackerName: trackerId === undefined ? textParam(search.trackerName, 200) : undefined,
  });
}

/** The filters of the URL that this list offers (another list's filter is ignored). */
export function filtersOf(spec: EntitySpec, search: ListSearch): Pick<ListSearch, FilterName> {
  const names = new Set<string>(spec.filters.map((f) => f.name));
  return compact(Object.fromEntries(Object.entries(search).filter(([name]) => names.has(name))));
}

/** The tracker as the API's `tracker` parameter takes it: digits are an id, anything else a name. */
export function trackerParam(search: GeneratorSearch): string | undefined {
  return search.trackerId !== undefined ? String(search.trackerId) : search.trackerName;
}
