/** One choice of a searchable picker: the id it stands for and what the person reads. */
export interface PickerOption {
  id: number;
  label: string;
  /** A second line that tells options of one name apart (a brand link's brand and account). */
  detail?: string | undefined;
}

/** One page of matches, as the catalog list routes answer them. */
export interface PickerPage {
  options: PickerOption[];
  total: number;
}

/**
 * Where a picker's options come from: `key` names its cached queries, `search` reads one page of
 * matches for a typed text, `one` reads the chosen row by id (it may be beyond every page read).
 */
export interface PickerSource {
  key: readonly unknown[];
  search: (text: string, offset: number, limit: number) => Promise<PickerPage>;
  one: (id: number) => Promise<PickerOption>;
}

/** Matches asked for at a time: a phone screen's worth, more on request. */
export const PICKER_PAGE = 20;
/** Typing waits this long after the last key before it asks the API. */
export const PICKER_DEBOUNCE_MS = 250;

/** The text a closed picker shows for an option: its label and, when there is one, its detail. */
export function shownLabel(option: PickerOption): string {
  return option.detail ? `${option.label} · ${option.detail}` : option.label;
}

/**
 * The option a key moves to among `count` (-1: none active). ArrowDown from the last stays on it
 * (the caller then reads more when there are more), ArrowUp from the first stays there.
 */
export function movedIndex(key: string, active: number, count: number): number {
  if (count === 0) return -1;
  if (key === "ArrowDown") return Math.min(active + 1, count - 1);
  if (key === "ArrowUp") return Math.max(active - 1, 0);
  if (key === "Home") return 0;
  if (key === "End") return count - 1;
  return active;
}
