import { DAY_MS } from "../../platform/durations.js";
import { ApiError } from "../../platform/http/errors.js";
import {
  CONVERSION_STATUSES,
  COUNTED_STATUSES,
  type ConversionStatus,
  parseStatusList,
  RAW_EVENT_RETENTION_DAYS,
} from "../tracking/index.js";
import type { ParamDef, ParamValue } from "./params.js";

/**
 * The conversion statuses a report counts (docs/reports-and-mcp.md, "Conversion statuses"): a
 * comma list in any case, default pending and approved, the statuses the rollups hold. A
 * conversion counts in the figures of its occurredAt whatever day its status changed.
 */
export const statusParam = (name: string): ParamDef => ({
  name,
  kind: "list",
  description:
    `Conversion statuses counted, comma-separated, any case: ${CONVERSION_STATUSES.join(", ")}; ` +
    `default ${COUNTED_STATUSES.join(",")}. Another set reads the raw conversions, kept ${RAW_EVENT_RETENTION_DAYS} days: its windows must start within them`,
});

/** The statuses a report counts, and whether they are read from the raw conversions. */
export interface StatusFilter {
  /** In CONVERSION_STATUSES' order: what the answer's meta.status shows. */
  list: ConversionStatus[];
  /**
   * The statuses to read from the raw conversions, or undefined when they are exactly the ones
   * the rollups hold (COUNTED_STATUSES): the report reads the rollups as it always did.
   */
  raw: readonly ConversionStatus[] | undefined;
}

/** Exactly the counted statuses, in any order: what the rollups hold, and what a report counts by default. */
export const isDefaultStatus = (list: readonly ConversionStatus[]): boolean =>
  list.length === COUNTED_STATUSES.length && COUNTED_STATUSES.every((s) => list.includes(s));

/**
 * The status filter of a report from its parsed parameter `name` (a list, or undefined when
 * absent), a 400 naming `name` for a value that is no status. A set other than the counted one
 * is read from the raw conversions, deleted after RAW_EVENT_RETENTION_DAYS days: every window
 * must then start within them (a 400 naming `name`, as a window too long names its end), where
 * an old window of the default set reads the rollups, which are kept.
 */
export function readStatusFilter(
  name: string,
  value: ParamValue,
  windows: readonly ({ from: Date; to: Date } | null)[],
  now: Date,
): StatusFilter {
  const parsed = parseStatusList(name, Array.isArray(value) ? value.join(",") : undefined);
  const list = parsed ?? [...COUNTED_STATUSES];
  if (isDefaultStatus(list)) return { list, raw: undefined };
  const kept = new Date(now.getTime() - RAW_EVENT_RETENTION_DAYS * DAY_MS);
  for (const window of windows) {
    if (window !== null && window.from < kept) {
      throw ApiError.invalid(
        name,
        `${name}: counting ${list.join(",")} reads the raw conversions, kept ${RAW_EVENT_RETENTION_DAYS} days: ` +
          `the window must start at ${kept.toISOString()} or later (it starts at ${window.from.toISOString()}); ` +
          `older windows count ${COUNTED_STATUSES.join(",")} only, the default`,
      );
    }
  }
  return { list, raw: list };
}
