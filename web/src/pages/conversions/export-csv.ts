import { api, unwrap } from "../../api/client";
import { buildCsv } from "../../csv";
import { type ConversionSearch, conversionQuery } from "./search";

/**
 * The most rows one export holds: 20 pages of the API's largest page (500). The dashboard pages
 * through GET /api/v1/conversions itself (docs/limits.md): the list's own filters, no second
 * route to keep in step, and the bearer token stays in its header (a download link carries none).
 */
export const EXPORT_MAX_ROWS = 10_000;
const EXPORT_PAGE = 500;

type Listed = Awaited<ReturnType<typeof fetchPage>>["data"][number];

function fetchPage(search: ConversionSearch, zone: string | undefined, offset: number) {
  const query = { ...conversionQuery(search, zone), offset, limit: EXPORT_PAGE };
  return unwrap(api.GET("/api/v1/conversions", { params: { query } }));
}

const COLUMNS: [string, (c: Listed) => string | number | null][] = [
  ["id", (c) => c.id],
  ["occurredAt", (c) => c.occurredAt],
  ["type", (c) => c.type],
  ["status", (c) => c.status],
  ["value", (c) => c.value],
  ["currency", (c) => c.currency],
  ["clickId", (c) => c.clickId],
  ["externalId", (c) => c.externalId],
  ["attributed", (c) => String(c.attributed)],
  ["account", (c) => c.names.account],
  ["accountId", (c) => c.accountId],
  ["brand", (c) => c.names.brand],
  ["link", (c) => c.names.link],
  ["trafficSource", (c) => c.names.trafficSource],
  ["trafficSourceId", (c) => c.trafficSourceId],
  ["tracker", (c) => c.names.tracker],
  ["recordedAt", (c) => c.recordedAt],
];

export function conversionsCsv(rows: readonly Listed[]): string {
  return buildCsv(
    COLUMNS.map(([name]) => name),
    rows.map((row) => COLUMNS.map(([, pick]) => pick(row))),
  );
}

/**
 * Every conversion the filters match, newest first, up to EXPORT_MAX_ROWS, page by page.
 * Conversions recorded meanwhile push the older ones down a page: those seen twice are kept once.
 */
export async function exportConversions(
  search: ConversionSearch,
  zone: string | undefined,
  onProgress: (done: number, total: number) => void,
): Promise<{ rows: Listed[]; total: number }> {
  const seen = new Map<string, Listed>();
  let total = 0;
  for (let offset = 0; offset < EXPORT_MAX_ROWS; offset += EXPORT_PAGE) {
    const page = await fetchPage(search, zone, offset);
    total = page.pagination.total;
    for (const row of page.data) if (seen.size < EXPORT_MAX_ROWS) seen.set(row.id, row);
    onProgress(seen.size, Math.min(total, EXPORT_MAX_ROWS));
    if (page.data.length < EXPORT_PAGE) break;
  }
  return { rows: [...seen.values()], total };
}
