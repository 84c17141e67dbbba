import type { PickerOption } from "../../components/SearchPickerModel.js";

/**
 * A brand link's brand and account tell apart links of one name ("main" in each account):
 * "nova-bingo main · Nova Casino / Acme account".
 */
export function optionOf(row: { id: number; name: string; [field: string]: unknown }): PickerOption {
  const names = row.names as { account?: string | null; brand?: string | null } | undefined;
  if (!names) return { id: row.id, label: row.name };
  const detail = [names.brand ?? "(brand gone)", names.account ?? "(account gone)"].join(" / ");
  return { id: row.id, label: row.name, detail };
}
