import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../../context.js";
import { parseDateRange } from "../../platform/http/dates.js";
import { Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { requireTimeZone } from "../../platform/time-zone.js";
import { callerOf } from "../auth/index.js";
import { tenantTimeZone } from "../tenants/index.js";
import { RAW_EVENT_RETENTION_DAYS } from "../tracking/index.js";
import { ClickDetail, ClickIdParams, ClickListQuery, ClickRecord } from "./schemas.js";
import { getClick, listClicks } from "./service.js";
import { clickLogWindow } from "./window.js";

const TAGS = ["Clicks"];

export type ClickLogRouteDeps = Pick<AppContext, "db" | "clock">;

/** GET /clicks and /clicks/{clickId}: the click log, with each click's facts (reports.read). */
export function clickLogRoutes(ctx: ClickLogRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const config = { permission: "reports.read" } as const;

    app.get(
      "/clicks",
      {
        config,
        schema: {
          tags: TAGS,
          summary: "The click log: a tenant's clicks with their facts, newest first",
          description:
            "Bots' clicks are listed too (bot: true, with botReason); bot=false leaves them out. Without clickId the " +
            "window is at most 31 days, the last 7 when dateFrom is absent. A click is listed once written (the " +
            `click buffer writes within a second); clicks are kept ${RAW_EVENT_RETENTION_DAYS} days.`,
          querystring: ClickListQuery,
          response: { 200: PagedEnvelope(ClickRecord), ...errorResponses },
        },
      },
      async (request) => {
        const { dateFrom, dateTo, timeZone, country, clickId, ...rest } = request.query;
        const { tenantId } = callerOf(request);
        const zone =
          timeZone === undefined ? await tenantTimeZone(ctx.db, tenantId) : requireTimeZone("timeZone", timeZone);
        const parsed = parseDateRange(["dateFrom", "dateTo"], dateFrom, dateTo, zone);
        // An exact click id needs no window: its page is one row at most.
        const window =
          clickId !== undefined && dateFrom === undefined && dateTo === undefined
            ? {}
            : clickLogWindow(parsed.from, parsed.to, ctx.clock.now());
        const { items, total } = await listClicks(ctx.db, tenantId, {
          ...rest,
          ...window,
          clickId,
          country: country?.toUpperCase(),
        });
        return paged(items, request.query, total);
      },
    );

    app.get(
      "/clicks/:clickId",
      {
        config,
        schema: {
          tags: TAGS,
          summary: "One click: its facts, attribution parameters, page views and conversions",
          params: ClickIdParams,
          response: { 200: Envelope(ClickDetail), ...errorResponses },
        },
      },
      async (request) => {
        const { clickId } = request.params;
        const click = await getClick(ctx.db, callerOf(request).tenantId, clickId);
        if (!click) throw ApiError.notFound("Click", clickId);
        return ok(click);
      },
    );
  };
}
