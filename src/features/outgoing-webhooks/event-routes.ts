import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { DateParam, parseDateRange } from "../../platform/http/dates.js";
import { Envelope, errorResponses, ok, PagedEnvelope, PageQuery, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { NullableString } from "../../platform/http/nullable.js";
import { callerOf } from "../auth/index.js";
import { EVENT_STATUSES, getEvent, listAttempts, listEvents } from "./event-service.js";

const BASE = "/conversions/outgoing/webhooks/events";
const TAG = "Outgoing conversion webhooks";
const NullableTime = NullableString({ format: "date-time" });

const DeliveryEvent = Type.Object({
  id: Type.String(),
  webhookId: Type.String(),
  conversionId: NullableString(),
  clickId: NullableString(),
  conversionType: Type.String(),
  status: Type.Enum(EVENT_STATUSES),
  attempts: Type.Integer(),
  lastAttemptAt: NullableTime,
  nextAttemptAt: NullableTime,
  createdAt: Type.String({ format: "date-time" }),
  simulated: Type.Boolean(),
});

const Headers = Type.Record(Type.String(), Type.String());
const Attempt = Type.Object({
  id: Type.String(),
  attempt: Type.Integer(),
  at: Type.String({ format: "date-time" }),
  urlTemplate: Type.String({ description: "The webhook's URL template; the resolved URL is never stored" }),
  method: Type.String(),
  request: Type.Object({ headers: Headers, body: NullableString() }),
  response: Type.Union([Type.Object({ status: Type.Integer(), headers: Headers, body: Type.String() }), Type.Null()]),
  durationMs: Type.Integer(),
  errorType: NullableString({
    description: "timeout, connection_refused, dns, tls, http_status, invalid_url, blocked_address",
  }),
  error: NullableString(),
});

const EventQuery = Type.Object(
  {
    ...PageQuery.properties,
    webhookId: Type.Optional(Type.String({ maxLength: 100 })),
    clickId: Type.Optional(Type.String({ maxLength: 100 })),
    conversionId: Type.Optional(Type.String({ maxLength: 100 })),
    status: Type.Optional(Type.Enum(EVENT_STATUSES)),
    dateFrom: Type.Optional(DateParam),
    dateTo: Type.Optional(DateParam),
  },
  { additionalProperties: false },
);
const EventId = Type.Object({ id: Type.String({ maxLength: 100 }) });

/** Delivery events and their attempt logs. */
export function webhookEventRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const config = { permission: "account.admin" } as const;
  return async (app) => {
    app.get(
      BASE,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Delivery events, newest first; the date range applies to when they were created",
          querystring: EventQuery,
          response: { 200: PagedEnvelope(DeliveryEvent), ...errorResponses },
        },
      },
      async (request) => {
        const { dateFrom, dateTo, ...rest } = request.query;
        const { from, to } = parseDateRange(["dateFrom", "dateTo"], dateFrom, dateTo);
        const { items, total } = await listEvents(ctx.db, callerOf(request).tenantId, { ...rest, from, to });
        return paged(items, request.query, total);
      },
    );

    app.get(
      `${BASE}/:id`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "One delivery event",
          params: EventId,
          response: { 200: Envelope(DeliveryEvent), ...errorResponses },
        },
      },
      async (request) => {
        const event = await getEvent(ctx.db, callerOf(request).tenantId, request.params.id);
        if (!event) throw ApiError.notFound("Delivery event", request.params.id);
        return ok(event);
      },
    );

    app.get(
      `${BASE}/:id/attempts`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "The attempts of one delivery event, oldest first",
          params: EventId,
          response: { 200: Envelope(Type.Array(Attempt)), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const event = await getEvent(ctx.db, tenantId, request.params.id);
        if (!event) throw ApiError.notFound("Delivery event", request.params.id);
        return ok(await listAttempts(ctx.db, tenantId, event.id));
      },
    );
  };
}
