import { keepPreviousData, useQuery, useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import type { Page } from "../../components/Pager";
import type { EntityKey, FilterName } from "./entities";

const LIST_PATH = {
  brands: "/api/v1/brands",
  programs: "/api/v1/programs",
  accounts: "/api/v1/accounts",
  links: "/api/v1/links",
  "traffic-sources": "/api/v1/traffic-sources",
  trackers: "/api/v1/trackers",
} as const satisfies Record<EntityKey, string>;

const ITEM_PATH = {
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

/** Every catalog query starts with this key: a change invalidates them all (pickers included). */
export const CATALOG_KEY = ["catalog"] as const;

export async function listRows(entity: EntityKey, query: ListQuery): Promise<{ rows: CatalogRow[]; page: Page }> {
  const answer = await unwrap(api.GET(LIST_PATH[entity], { params: { query } }));
  return { rows: answer.data, page: answer.pagination };
}

export async function getRow(entity: EntityKey, id: number): Promise<CatalogRow> {
  return (await unwrap(api.GET(ITEM_PATH[entity], { params: { path: { id } } }))).data;
}

// The body is built from the entity's description (form-values.ts), not from one route's type;
// the API validates it, and its refusals are shown next to their fields.
type Body = never;

export async function createRow(entity: EntityKey, body: Record<string, unknown>): Promise<CatalogRow> {
  return (await unwrap(api.POST(LIST_PATH[entity], { body: body as Body }))).data;
}

export async function updateRow(entity: EntityKey, id: number, body: Record<string, unknown>): Promise<CatalogRow> {
  return (await unwrap(api.PATCH(ITEM_PATH[entity], { params: { path: { id } }, body: body as Body }))).data;
}

export async function deleteRow(entity: EntityKey, id: number): Promise<void> {
  await unwrap(api.DELETE(ITEM_PATH[entity], { params: { path: { id } } }));
}

export function useRows(entity: EntityKey, query: ListQuery) {
  return useQuery({
    queryKey: [...CATALOG_KEY, entity, "list", query],
    queryFn: () => listRows(entity, query),
    placeholderData: keepPreviousData,
  });
}

/** A picker's rows (and a table's names for ids): the first OPTIONS_LIMIT, oldest first. */
export function useOptions(entity: EntityKey, enabled = true) {
  return useQuery({
    queryKey: [...CATALOG_KEY, entity, "options"],
    queryFn: () => listRows(entity, { offset: 0, limit: OPTIONS_LIMIT }),
    enabled,
  });
}

export function useRow(entity: EntityKey, id: number | undefined) {
  return useQuery({
    queryKey: rowKey(entity, id),
    queryFn: () => getRow(entity, id ?? 0),
    enabled: id !== undefined,
  });
}

const rowKey = (entity: EntityKey, id: number | undefined) => [...CATALOG_KEY, entity, "row", id] as const;

/**
 * After a change: every catalog list, picker and count may show it. A deleted row's own query
 * is left alone: asked again, it could only answer 404 while its page is still on screen.
 */
export function useInvalidateCatalog(): (deleted?: { entity: EntityKey; id: number }) => Promise<void> {
  const client = useQueryClient();
  return (deleted) => {
    const gone = deleted ? JSON.stringify(rowKey(deleted.entity, deleted.id)) : undefined;
    return client.invalidateQueries({
      queryKey: CATALOG_KEY,
      predicate: (query) => gone === undefined || JSON.stringify(query.queryKey) !== gone,
    });
  };
}

export async function generateLink(linkId: number, sourceId: number, tracker: string | undefined) {
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
