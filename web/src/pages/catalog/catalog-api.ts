import { useQueryClient } from "@tanstack/react-query";
import { api, unwrap } from "../../api/client";
import type { EntityKey } from "./entities";
import { CATALOG_KEY, type CatalogRow, ITEM_PATH, LIST_PATH, rowKey } from "./queries";

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
