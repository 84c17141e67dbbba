import type { PickerSource } from "../../components/SearchPickerModel";
import type { EntityKey, FilterName } from "./entities";
import { optionOf } from "./picker-labels";
import { CATALOG_KEY, getRow, type ListQuery, listRows } from "./queries";

type Filters = Partial<Record<FilterName, number | undefined>>;

/**
 * One catalog list as a picker's source: `search` on the list route (a brand link's search also
 * matches its brand's and account's names), narrowed by `filters`. Its queries start with
 * CATALOG_KEY, so a catalog change refreshes them.
 */
export function catalogPicker(entity: EntityKey, filters: Filters = {}): PickerSource {
  const narrowed = Object.fromEntries(Object.entries(filters).filter(([, v]) => v !== undefined)) as Filters;
  return {
    key: [...CATALOG_KEY, entity, "picker", narrowed],
    search: async (text, offset, limit) => {
      const query: ListQuery = { offset, limit, ...narrowed, ...(text === "" ? {} : { search: text }) };
      const { rows, page } = await listRows(entity, query);
      return { options: rows.map(optionOf), total: page.total };
    },
    one: async (id) => optionOf(await getRow(entity, id)),
  };
}
