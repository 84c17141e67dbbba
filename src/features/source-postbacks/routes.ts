import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../../context.js";
import { parseDateRange } from "../../platform/http/dates.js";
import { conflictResponses, Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { AddressPolicy } from "../../platform/webhook-sender.js";
import { actorOf } from "../audit/index.js";
import { callerOf } from "../auth/index.js";
import {
  AttemptQuery,
  PostbackAttempt,
  PostbackParams,
  PostbackQuery,
  PostbackRecord,
  PostbackTest,
  SourceParams,
} from "./schemas.js";
import { listPostbackAttempts, listPostbacks, resendPostback } from "./service.js";
import { POSTBACK_READ, POSTBACK_WRITE } from "./settings.js";
import { auditPostbackTest, postbackToTest, sendTestPostback } from "./test-send.js";

const BASE = "/traffic-sources/:id/postbacks";
const TAG = "Traffic sources";

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type SourcePostbackRouteDeps = Pick<AppContext, "db" | "clock" | "config">;

/**
 * A traffic source's postbacks and their attempt logs: read with webhooks.read, resent (whatever
 * their status, Delivered included) with webhooks.update, as outgoing webhook deliveries: they
 * carry the same conversion data (settings.ts).
 */
export function sourcePostbackRoutes(ctx: SourcePostbackRouteDeps): FastifyPluginAsyncTypebox {
  const read = { permission: POSTBACK_READ } as const;
  const write = { permission: POSTBACK_WRITE } as const;
  const sendSettings = {
    timeoutMs: ctx.config.webhookTimeoutMs,
    policy: new AddressPolicy(ctx.config.webhookAllowedHosts),
  };
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

    app.post(
      "/traffic-sources/:id/postback/test",
      {
        config: write,
        schema: {
          tags: [TAG],
          summary: "Send a sample conversion to the source's postback URL now; answers the request and the reply",
          description:
            "A GET through the same guarded sender and timeout as real postbacks, enabled or not. The sample's " +
            "clickId, conversionId, externalClickId and externalId start with `test_`. Nothing is recorded (no " +
            "conversion, postback or attempt, not metered); the URL answered has its secrets masked. 409 when the " +
            "source has no postback. A few tests per source per minute (SIMULATE_PER_WEBHOOK_PER_MINUTE); past " +
            "that, 429 with Retry-After.",
          params: SourceParams,
          response: { 200: Envelope(PostbackTest), ...conflictResponses },
        },
      },
      async (request, reply) => {
        const caller = callerOf(request);
        const sourceId = request.params.id;
        const postback = await postbackToTest(ctx.db, caller.tenantId, sourceId);
        // Each test sends a real request outside the webhook allowance: the simulations' budget.
        const key = `postback-test:${caller.tenantId}:${sourceId}`;
        await app.limits.takeTrialSend(reply, key, "postback tests of this traffic source");
        const result = await sendTestPostback(postback, sendSettings);
        await auditPostbackTest(ctx.db, {
          tenantId: caller.tenantId,
          actor: actorOf(caller),
          sourceId,
          result,
          requestId: request.id,
          at: ctx.clock.now(),
        });
        return ok(result, result.error === null ? "Test postback delivered" : "Test postback failed");
      },
    );
  };
}
