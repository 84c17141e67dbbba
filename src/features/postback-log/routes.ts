import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../../context.js";
import { parseDateRange } from "../../platform/http/dates.js";
import { errorResponses, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { requireTimeZone } from "../../platform/time-zone.js";
import { callerOf } from "../auth/index.js";
import { tenantTimeZone } from "../tenants/index.js";
import { POSTBACK_LOG_OUTCOMES, type PostbackLogOutcome } from "./entry.js";
import { POSTBACK_LOG_RETENTION_DAYS } from "./retention.js";
import { PostbackLogLineSchema, PostbackLogQuery } from "./schemas.js";
import { listPostbackLog } from "./service.js";

/** At most this many names in a comma list filter. */
const MAX_LISTED = 20;

function commaList(field: string, raw: string | undefined): string[] | undefined {
  if (raw === undefined) return undefined;
  const parts = [...new Set(raw.split(",").map((part) => part.trim()))];
  if (parts.length > MAX_LISTED) throw ApiError.validation(field, `at most ${MAX_LISTED} values, got ${parts.length}`);
  if (parts.some((part) => part === "")) throw ApiError.validation(field, "must not hold an empty value");
  return parts;
}

function outcomeList(raw: string | undefined): PostbackLogOutcome[] | undefined {
  const parts = commaList("outcome", raw);
  if (parts === undefined) return undefined;
  return parts.map((part) => {
    const outcome = POSTBACK_LOG_OUTCOMES.find((o) => o.toLowerCase() === part.toLowerCase());
    if (!outcome) {
      throw ApiError.validation(
        "outcome",
        `'${part}' is not an outcome; a comma list of ${POSTBACK_LOG_OUTCOMES.join(", ")}`,
      );
    }
    return outcome;
  });
}

export type PostbackLogRouteDeps = Pick<AppContext, "db">;

/** GET /postback-log: what arrived by postback or API and what became of it (conversions.read). */
export function postbackLogRoutes(ctx: PostbackLogRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/postback-log",
      {
        config: { permission: "conversions.read" },
        schema: {
          tags: ["Conversions"],
          summary: "The log of incoming conversions: every postback call and API item with its outcome, newest first",
          description:
            `Kept ${POSTBACK_LOG_RETENTION_DAYS} days. A call refused before its key was known (an unknown key, a ` +
            "rate limit) belongs to no tenant and is not listed. outcome and type: comma lists (any case); clickId and " +
            "externalId: exact; the window applies to when the call arrived.",
          querystring: PostbackLogQuery,
          response: { 200: PagedEnvelope(PostbackLogLineSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { dateFrom, dateTo, timeZone, outcome, type, ...rest } = request.query;
        const { tenantId } = callerOf(request);
        const zone =
          timeZone === undefined ? await tenantTimeZone(ctx.db, tenantId) : requireTimeZone("timeZone", timeZone);
        const { from, to } = parseDateRange(["dateFrom", "dateTo"], dateFrom, dateTo, zone);
        const { items, total } = await listPostbackLog(ctx.db, tenantId, {
          ...rest,
          outcome: outcomeList(outcome),
          type: commaList("type", type)?.map((t) => t.toLowerCase()),
          from,
          to,
        });
        return paged(items, request.query, total);
      },
    );
  };
}
