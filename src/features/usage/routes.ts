import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { TimeZoneParam } from "../../platform/http/dates.js";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { requireTimeZone } from "../../platform/time-zone.js";
import { callerOf } from "../auth/index.js";
import { tenantTimeZone } from "../tenants/index.js";
import { allowanceUsage } from "./allowance.js";
import { usageBreakdown, usageStats, usageTimeseries } from "./service.js";

const ApiTokenFilter = {
  apiTokenId: Type.Optional(Type.String({ maxLength: 100, description: "Only the calls made with this key" })),
};

const Stats = Type.Object({
  from: Type.String({ format: "date-time" }),
  to: Type.String({ format: "date-time" }),
  totalCalls: Type.Integer(),
  rateLimited: Type.Integer({ description: "Calls refused with 429" }),
  uniqueIps: Type.Integer(),
  byStatusClass: Type.Object({
    "2xx": Type.Integer(),
    "3xx": Type.Integer(),
    "4xx": Type.Integer(),
    "5xx": Type.Integer(),
  }),
  clicksNotRecorded: Type.Integer({
    description:
      "Clicks on the tenant's links redirected but not recorded: their client IP was past " +
      "CLICK_RATE_PER_IP_PER_MINUTE (not counted in the other figures; 0 when apiTokenId is given)",
  }),
});

const Timeseries = Type.Object({
  timeZone: Type.String({ description: "The IANA time zone the day buckets are local days of" }),
  interval: Type.Union([Type.Literal("hour"), Type.Literal("day")]),
  buckets: Type.Array(Type.Object({ start: Type.String({ format: "date-time" }), calls: Type.Integer() })),
});

const Breakdown = Type.Array(
  Type.Object({
    key: Type.String({ description: "'METHOD /route/template' or the key's id" }),
    label: Type.String(),
    calls: Type.Integer(),
  }),
);

const Allowance = Type.Object({
  period: Type.Object(
    { from: Type.String({ format: "date-time" }), to: Type.String({ format: "date-time" }) },
    { description: "The current UTC calendar month, to exclusive" },
  ),
  allowance: Type.Union([Type.Integer(), Type.Null()], {
    description: "Webhook deliveries allowed a month; null = unlimited",
  }),
  used: Type.Integer({ description: "Deliveries counted this month (an event once, at its first attempt)" }),
  held: Type.Integer({ description: "Deliveries held now for want of allowance" }),
});

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type UsageRouteDeps = Pick<AppContext, "db" | "clock" | "usage">;

/** Usage of the tenant's API keys over the rolling 72 hours. */
export function usageRoutes(ctx: UsageRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const config = { permission: "usage.read" } as const;
    // This node's buffered calls are written first, so a caller reading right after its own
    // calls sees them; other nodes' buffers land within a second.
    app.addHook("preHandler", async () => {
      await ctx.usage.flush();
    });
    const scope = (tenantId: string, apiTokenId: string | undefined) => ({
      tenantId,
      apiTokenId,
      now: ctx.clock.now(),
    });

    app.get(
      "/traffic-controls/api-usage/stats",
      {
        config,
        schema: {
          tags: ["Usage"],
          summary: "Totals of calls made with the tenant's keys over the rolling 72 hours",
          querystring: Type.Object(ApiTokenFilter),
          response: { 200: Envelope(Stats), ...errorResponses },
        },
      },
      async (request) => ok(await usageStats(ctx.db, scope(callerOf(request).tenantId, request.query.apiTokenId))),
    );

    app.get(
      "/traffic-controls/api-usage/timeseries",
      {
        config,
        schema: {
          tags: ["Usage"],
          summary: "Calls by hour or by day over the rolling 72 hours",
          querystring: Type.Object({
            interval: Type.Union([Type.Literal("hour"), Type.Literal("day")], { default: "hour" }),
            timeZone: Type.Optional(TimeZoneParam),
            ...ApiTokenFilter,
          }),
          response: { 200: Envelope(Timeseries), ...errorResponses },
        },
      },
      async (request) => {
        const { tenantId } = callerOf(request);
        const { timeZone } = request.query;
        const zone =
          timeZone === undefined ? await tenantTimeZone(ctx.db, tenantId) : requireTimeZone("timeZone", timeZone);
        return ok(
          await usageTimeseries(ctx.db, scope(tenantId, request.query.apiTokenId), request.query.interval, zone),
        );
      },
    );

    app.get(
      "/traffic-controls/api-usage/breakdown",
      {
        config,
        schema: {
          tags: ["Usage"],
          summary: "Calls grouped by endpoint or by API key over the rolling 72 hours, busiest first",
          querystring: Type.Object({
            groupBy: Type.Union([Type.Literal("endpoint"), Type.Literal("apiKey")], { default: "endpoint" }),
            ...ApiTokenFilter,
          }),
          response: { 200: Envelope(Breakdown), ...errorResponses },
        },
      },
      async (request) =>
        ok(
          await usageBreakdown(
            ctx.db,
            scope(callerOf(request).tenantId, request.query.apiTokenId),
            request.query.groupBy,
          ),
        ),
    );

    app.get(
      "/usage/allowance",
      {
        config,
        schema: {
          tags: ["Usage"],
          summary: "Webhook deliveries sent this month against the monthly allowance, and those held for want of it",
          response: { 200: Envelope(Allowance), ...errorResponses },
        },
      },
      async (request) => {
        const { tenantId } = callerOf(request);
        const usage = await allowanceUsage(ctx.db, tenantId, ctx.clock.now());
        if (!usage) throw ApiError.notFound("Tenant", tenantId);
        return ok(usage);
      },
    );
  };
}
