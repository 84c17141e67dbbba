import type { Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import type { Permission } from "../auth/index.js";
import {
  blockedHostProblem,
  type HostScreen,
  liveVocabulary,
  PlaceholderError,
  validateTemplate,
} from "../outgoing-webhooks/index.js";
import { COMMISSION_TYPES, type ConversionType, isConversionType } from "../tracking/index.js";
import { announcePostbacks } from "./queue.js";
import type { Postback } from "./schemas.js";

/**
 * The rights over a traffic source's postback, its attempts and its Google Ads connection: those
 * of outgoing webhooks, which carry the same conversion data to a host the caller chooses. The
 * catalog's rights alone would let a catalog editor send every conversion anywhere.
 */
export const POSTBACK_READ = "webhooks.read" satisfies Permission;
export const POSTBACK_WRITE = "webhooks.update" satisfies Permission;

/**
 * The names a postback URL may use: the live outgoing-webhook names plus the source's click id
 * (`externalId`) and its share of the value (`payout`). Simulate-only names are left out: there is
 * no simulation of a postback, so they would always be empty.
 */
export const POSTBACK_VOCABULARY = liveVocabulary({ externalId: "zone-7f3a9c", payout: "10.2" });

/** The types a postback may filter on: never commissions (calculated) nor Click (not a conversion). */
function checkType(type: string): ConversionType {
  if (!isConversionType(type)) {
    throw ApiError.validation("postback.conversionTypes", `'${type}' is not a conversion type`);
  }
  if (COMMISSION_TYPES.has(type)) {
    throw ApiError.validation("postback.conversionTypes", `${type} is calculated and never fires postbacks`);
  }
  if (type === "Click") throw ApiError.validation("postback.conversionTypes", "Click is not a conversion");
  return type;
}

export interface PostbackInput {
  url: string;
  conversionTypes?: string[] | undefined;
  payoutShare?: number | null | undefined;
  enabled?: boolean | undefined;
  statusChanges?: boolean | undefined;
}

/**
 * Checks a postback as PATCH takes it and fills its defaults; null stays null (no postback).
 * The URL is refused as outgoing webhook URLs are: a placeholder that names nothing, a URL that
 * is no web address with sample or empty values, a raw value in the origin, or a host that every
 * delivery would be refused for (private, loopback or reserved, unless WEBHOOK_ALLOWED_HOSTS lets
 * it through). Runs before the transaction: the host's DNS lookup must not hold a connection.
 */
export async function checkPostback(input: PostbackInput | null, screen: HostScreen): Promise<Postback | null> {
  if (input === null) return null;
  const url = input.url.trim();
  try {
    validateTemplate(url, POSTBACK_VOCABULARY);
  } catch (error) {
    if (error instanceof PlaceholderError) throw ApiError.invalid("postback.url", `postback.url: ${error.message}`);
    throw error;
  }
  const blocked = await blockedHostProblem(url, screen, POSTBACK_VOCABULARY);
  if (blocked !== null) throw ApiError.invalid("postback.url", `postback.url: ${blocked}`);
  const conversionTypes = [...new Set(input.conversionTypes ?? [])].map(checkType);
  return {
    url,
    conversionTypes,
    payoutShare: input.payoutShare ?? null,
    enabled: input.enabled ?? true,
    statusChanges: input.statusChanges ?? false,
  };
}

/**
 * A postback just saved Enabled sends what waited while it was disabled or removed (Paused),
 * as a re-enabled webhook does; in the saving transaction.
 */
export async function resumePostbacks(
  tx: Queryable,
  tenantId: string,
  sourceId: number,
  postback: Postback | null,
  now: Date,
): Promise<void> {
  if (postback === null || !postback.enabled) return;
  const rows = await tx.query(
    `update source_postbacks set status = 'Queued', next_attempt_at = $3
      where tenant_id = $1 and traffic_source_id = $2 and status = 'Paused' returning 1`,
    [tenantId, sourceId, now],
  );
  if (rows.length > 0) await announcePostbacks(tx, tenantId);
}
