import { api, unwrap } from "../../api/client";
import type { Page } from "../../components/Pager";
import type { EntityKey, EntitySpec, FilterName } from "./entities";
import { filtersOf, type GeneratorSearch, type ListSearch, trackerParam } from "./search";

export const LIST_PATH = {
  brands: "/api/v1/brands",
  programs: "/api/v1/programs",
  accounts: "/api/v1/accounts",
  links: "/api/v1/links",
  "traffic-sources": "/api/v1/traffic-sources",
  trackers: "/api/v1/trackers",
} as const satisfies Record<EntityKey, string>;

export const ITEM_PATH = {
  brands: "/api/v1/brands/{id}",
  programs: "/api/v1/programs/{id}",
  accounts: "/api/v1/accounts/{id}",
  links: "/api/v1/links/{id}",
  "traffic-sources": "/api/v1/traffic-sources/{id}",
  trackers: "/api/v1/trackers/{id}",
} as const satisfies Record<EntityKey, `${(typeof LIST_PATH)[EntityKey]}/{id}`>;

/** One catalog row as the API answers it: every list has an id, a name and timestamps. */
export interface CatalogRow {
  id: number;
  name: string;
  createdAt: string;
  updatedAt: string;
  [field: string]: unknown;
}

export type ListQuery = { offset: number; limit: number; search?: string } & Partial<
  Record<FilterName, number | string | undefined>
>;

export const PAGE_SIZE = 25;
/** Pickers offer up to this many rows (the API's largest page). */
export const OPTIONS_LIMIT = 500;

/** The link generator asks only whether there are any links and sources. */
export const FIRST_ROW = { offset: 0, limit: 1 };

/** Every catalog query starts with this key: a change invalidates them all (pickers included). */
export const CATALOG_KEY = ["catalog"] as const;

export async function listRows(entity: EntityKey, query: ListQuery): Promise<{ rows: CatalogRow[]; page: Page }> {
  const answer = await unwrap(api.GET(LIST_PATH[entity], { params: { query } }));
  return { rows: answer.data, page: answer.pagination };
}

export async function getRow(entity: EntityKey, id: number): Promise<CatalogRow> {
  return (await unwrap(api.GET(ITEM_PATH[entity], { params: { path: { id } } }))).data;
}

export const rowKey = (entity: EntityKey, id: number | undefined) => [...CATALOG_KEY, entity, "row", id] as const;

/** One page of a list, as its address searches and filters it. */
export const rowsQuery = (entity: EntityKey, query: ListQuery) => ({
  queryKey: [...CATALOG_KEY, entity, "list", query],
  queryFn: () => listRows(entity, query),
});

/** What a list's address asks of the API: the page, the search, the filters this list offers. */
export function listQueryOf(spec: EntitySpec, search: ListSearch): ListQuery {
  return {
    offset: search.offset ?? 0,
    limit: PAGE_SIZE,
    ...(search.search ? { search: search.search } : {}),
    ...filtersOf(spec, search),
  };
}

/** A picker's rows (and a table's names for ids): the first OPTIONS_LIMIT, oldest first. */
export const optionsQuery = (entity: EntityKey) => ({
  queryKey: [...CATALOG_KEY, entity, "options"],
  queryFn: () => listRows(entity, { offset: 0, limit: OPTIONS_LIMIT }),
});

export const rowQuery = (entity: EntityKey, id: number | undefined) => ({
  queryKey: rowKey(entity, id),
  queryFn: () => getRow(entity, id ?? 0),
});

/** How many rows a list holds (the catalog's home). */
export const countQuery = (entity: EntityKey) => ({
  queryKey: [...CATALOG_KEY, entity, "count"],
  queryFn: async () => (await listRows(entity, { offset: 0, limit: 1 })).page.total,
});

/** The tracking URL of a brand link on a traffic source, with a tracker (the link generator). */
export const generatedLinkQuery = (search: GeneratorSearch) => ({
  queryKey: [...CATALOG_KEY, "generated", search],
  queryFn: () => generateLink(search.link ?? 0, search.source ?? 0, trackerParam(search)),
});

async function generateLink(linkId: number, sourceId: number, tracker: string | undefined) {
  const answer = await unwrap(
    api.GET("/api/v1/link-generator/router/brand-link/{brandLinkId}/traffic-source/{trafficSourceId}/url", {
      params: {
        path: { brandLinkId: linkId, trafficSourceId: sourceId },
        query: tracker === undefined ? {} : { tracker },
      },
    }),
  );
  return answer.data;
}

export type CatalogKind = EntityKey;

/** The catalog item's name, from its own route (each path is typed on its own). */
async function nameOf(kind: CatalogKind, id: number): Promise<string> {
  const path = { params: { path: { id } } };
  switch (kind) {
    case "accounts":
      return (await unwrap(api.GET("/api/v1/accounts/{id}", path))).data.name;
    case "links":
      return (await unwrap(api.GET("/api/v1/links/{id}", path))).data.name;
    case "programs":
      return (await unwrap(api.GET("/api/v1/programs/{id}", path))).data.name;
    case "brands":
      return (await unwrap(api.GET("/api/v1/brands/{id}", path))).data.name;
    case "traffic-sources":
      return (await unwrap(api.GET("/api/v1/traffic-sources/{id}", path))).data.name;
    case "trackers":
      return (await unwrap(api.GET("/api/v1/trackers/{id}", path))).data.name;
  }
}

/** A catalog item's name where another area names it by id (a conversion's account, link, ...). */
export const catalogNameQuery = (kind: CatalogKind, id: number) => ({
  queryKey: [...CATALOG_KEY, kind, id],
  queryFn: () => nameOf(kind, id),
  staleTime: 5 * 60_000,
});
