import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../../context.js";
import { parseDateRange } from "../../platform/http/dates.js";
import { Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { callerOf } from "../auth/index.js";
import {
  AttemptQuery,
  PostbackAttempt,
  PostbackParams,
  PostbackQuery,
  PostbackRecord,
  SourceParams,
} from "./schemas.js";
import { listPostbackAttempts, listPostbacks, resendPostback } from "./service.js";
import { POSTBACK_READ, POSTBACK_WRITE } from "./settings.js";

const BASE = "/traffic-sources/:id/postbacks";
const TAG = "Traffic sources";

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type SourcePostbackRouteDeps = Pick<AppContext, "db" | "clock">;

/**
 * A traffic source's postbacks and their attempt logs: read with webhooks.read, resent (whatever
 * their status, Delivered included) with webhooks.update, as outgoing webhook deliveries: they
 * carry the same conversion data (settings.ts).
 */
export function sourcePostbackRoutes(ctx: SourcePostbackRouteDeps): FastifyPluginAsyncTypebox {
  const read = { permission: POSTBACK_READ } as const;
  const write = { permission: POSTBACK_WRITE } as const;
  return async (app) => {
    app.get(
      BASE,
      {
        config: read,
        schema: {
          tags: [TAG],
          summary: "The source's postbacks, newest first; the date range applies to when they were queued",
          params: SourceParams,
          querystring: PostbackQuery,
          response: { 200: PagedEnvelope(PostbackRecord), ...errorResponses },
        },
      },
      async (request) => {
        const { dateFrom, dateTo, ...rest } = request.query;
        const { from, to } = parseDateRange(["dateFrom", "dateTo"], dateFrom, dateTo);
        const tenantId = callerOf(request).tenantId;
        const { items, total } = await listPostbacks(ctx.db, tenantId, request.params.id, { ...rest, from, to });
        return paged(items, request.query, total);
      },
    );

    app.get(
      `${BASE}/:postbackId/attempts`,
      {
        config: read,
        schema: {
          tags: [TAG],
          summary: "A postback's attempts, oldest first (the URL template, never the resolved URL)",
          params: PostbackParams,
          querystring: AttemptQuery,
          response: { 200: PagedEnvelope(PostbackAttempt), ...errorResponses },
        },
      },
      async (request) => {
        const { id, postbackId } = request.params;
        const tenantId = callerOf(request).tenantId;
        const { items, total } = await listPostbackAttempts(ctx.db, tenantId, id, postbackId, request.query);
        return paged(items, request.query, total);
      },
    );

    app.post(
      `${BASE}/:postbackId/resend`,
      {
        config: write,
        schema: {
          tags: [TAG],
          summary: "Send one postback again now, whatever its status",
          params: PostbackParams,
          response: { 200: Envelope(PostbackRecord), ...errorResponses },
        },
      },
      async (request) => {
        const { id, postbackId } = request.params;
        const tenantId = callerOf(request).tenantId;
        const queued = await ctx.db.transaction((tx) => resendPostback(tx, tenantId, id, postbackId, ctx.clock.now()));
        return ok(queued, "Queued for a new attempt");
      },
    );
  };
}
