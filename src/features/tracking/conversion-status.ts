import { ApiError } from "../../platform/http/errors.js";

/**
 * The conversion lifecycle (docs/conversions.md "Statuses"): networks and programs change their
 * minds, so a conversion is pending, approved, rejected or reversed. Approved when none is given,
 * so a caller that never sends a status sees what it always did.
 */
export const CONVERSION_STATUSES = ["pending", "approved", "rejected", "reversed"] as const;
export type ConversionStatus = (typeof CONVERSION_STATUSES)[number];

export const DEFAULT_STATUS: ConversionStatus = "approved";

/** The statuses reports count unless told otherwise; the rollups hold exactly these. */
export const COUNTED_STATUSES: readonly ConversionStatus[] = ["pending", "approved"];

export const isCounted = (status: ConversionStatus): boolean => COUNTED_STATUSES.includes(status);

export function isConversionStatus(value: string): value is ConversionStatus {
  return (CONVERSION_STATUSES as readonly string[]).includes(value);
}

/** Where a status came from, for its history. */
export type StatusSource = "postback" | "api" | "dashboard";

/** Who set a status: an API key, a signed-in person, or a postback (no id or name of its own). */
export interface StatusActor {
  type: "apiKey" | "user" | "postback";
  id: string | null;
  name: string | null;
}

/** How a recording or a change reached us: its history entry's `source` and `by`. */
export interface StatusOrigin {
  source: StatusSource;
  by: StatusActor;
}

export const POSTBACK_ORIGIN: StatusOrigin = Object.freeze({
  source: "postback",
  by: Object.freeze({ type: "postback", id: null, name: null }),
}) as StatusOrigin;

/** The origin of a request by an authenticated caller: a person is the dashboard, a key the API. */
export function callerOrigin(
  caller: { kind: "user"; userId: string; name: string } | { kind: "apiKey"; tokenId: string; name: string },
): StatusOrigin {
  return caller.kind === "user"
    ? { source: "dashboard", by: { type: "user", id: caller.userId, name: caller.name } }
    : { source: "api", by: { type: "apiKey", id: caller.tokenId, name: caller.name } };
}

/**
 * A `status` filter: a comma list of statuses in any case (`pending,APPROVED`), each once; a 400
 * naming `field` for anything else. Undefined when absent: the caller's default applies.
 */
export function parseStatusList(field: string, raw: string | undefined): ConversionStatus[] | undefined {
  if (raw === undefined) return undefined;
  const picked = new Set<ConversionStatus>();
  for (const part of raw.split(",")) {
    const status = part.trim().toLowerCase();
    if (!isConversionStatus(status)) {
      throw ApiError.validation(
        field,
        `'${part.trim()}' is not a status; a comma list of ${CONVERSION_STATUSES.join(", ")} (any case)`,
      );
    }
    picked.add(status);
  }
  return CONVERSION_STATUSES.filter((s) => picked.has(s));
}
