import { formatLabel } from "../../format";

/** A detail's value as text: the API's details are free-form JSON. */
export const showDetail = (value: unknown) =>
  value === null ? "never" : typeof value === "object" ? JSON.stringify(value) : String(value);

/** The first few details on one line, for a list row; the page shows them all. */
export function detailsSummary(details: Record<string, unknown>, max = 3): string {
  const entries = Object.entries(details);
  const shown = entries.slice(0, max).map(([key, value]) => `${formatLabel(key)}: ${showDetail(value)}`);
  return entries.length > max ? `${shown.join(" · ")} · …` : shown.join(" · ");
}

/** An issue's kind or subject type as words: `outgoing_webhook_failed` -> "Outgoing webhook failed". */
export const kindLabel = (kind: string) => formatLabel(kind);
