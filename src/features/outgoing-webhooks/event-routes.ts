import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { DateParam, parseDateRange } from "../../platform/http/dates.js";
import { Envelope, errorResponses, ok, PagedEnvelope, PageQuery, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { NullableString } from "../../platform/http/nullable.js";
import { callerOf } from "../auth/index.js";
import { cancelEvents, deleteEvents, type EventRange, resendEvent } from "./event-ops.js";
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
  conversionStatus: NullableString({
    description:
      "The conversion's status this delivery carries (pending, approved, rejected, reversed); null for a Click",
  }),
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
    description:
      "timeout, connection_refused, dns, tls, http_status, invalid_url, blocked_address, url_origin_changed, url_path_changed",
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
const AttemptQuery = Type.Object({ ...PageQuery.properties }, { additionalProperties: false });

const RangeBody = Type.Object(
  {
    webhookId: Type.Optional(Type.String({ maxLength: 100, description: "Only this webhook's events" })),
    dateFrom: DateParam,
    dateTo: DateParam,
  },
  { additionalProperties: false },
);

function rangeOf(body: { webhookId?: string | undefined; dateFrom: string; dateTo: string }): EventRange {
  const { from, to } = parseDateRange(["dateFrom", "dateTo"], body.dateFrom, body.dateTo);
  if (!from || !to) throw ApiError.validation("dateFrom", "and dateTo are required");
  return { webhookId: body.webhookId, from, to };
}

// Deleting or bulk-cancelling events needs account-admin and traffic-sources.delete,
// both checked by the auth hook before the body is validated or anything is looked up.
const destructive = { config: { permission: ["account.admin", "traffic-sources.delete"] } } as const;

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type WebhookEventRouteDeps = Pick<AppContext, "db" | "clock">;

/** Delivery events and their attempt logs. */
export function webhookEventRoutes(ctx: WebhookEventRouteDeps): FastifyPluginAsyncTypebox {
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
          querystring: AttemptQuery,
          response: { 200: PagedEnvelope(Attempt), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const event = await getEvent(ctx.db, tenantId, request.params.id);
        if (!event) throw ApiError.notFound("Delivery event", request.params.id);
        const { items, total } = await listAttempts(ctx.db, tenantId, event.id, request.query);
        return paged(items, request.query, total);
      },
    );

    app.post(
      `${BASE}/:id/resend`,
      {
        config,
        schema: {
          tags: [TAG],
          summary: "Send one event again now, whatever its status",
          params: EventId,
          response: { 200: Envelope(DeliveryEvent), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const queued = await ctx.db.transaction((tx) => resendEvent(tx, tenantId, request.params.id, ctx.clock.now()));
        const event = queued ? await getEvent(ctx.db, tenantId, request.params.id) : null;
        if (!event) throw ApiError.notFound("Delivery event", request.params.id);
        return ok(event, "Queued for a new attempt");
      },
    );

    app.post(
      `${BASE}/cancel`,
      {
        ...destructive,
        schema: {
          tags: [TAG],
          summary: "Cancel the events of a date range (optionally one webhook's) that are still waiting",
          body: RangeBody,
          response: { 200: Envelope(Type.Object({ cancelled: Type.Integer() })), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const cancelled = await cancelEvents(ctx.db, caller.tenantId, rangeOf(request.body));
        return ok({ cancelled }, `${cancelled} cancelled`);
      },
    );

    app.post(
      `${BASE}/delete`,
      {
        ...destructive,
        schema: {
          tags: [TAG],
          summary: "Delete the events of a date range (optionally one webhook's) with their attempts",
          body: RangeBody,
          response: { 200: Envelope(Type.Object({ deleted: Type.Integer() })), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const deleted = await deleteEvents(ctx.db, caller.tenantId, rangeOf(request.body));
        return ok({ deleted }, `${deleted} deleted`);
      },
    );

    app.delete(
      `${BASE}/:id`,
      {
        ...destructive,
        schema: {
          tags: [TAG],
          summary: "Delete one event with its attempts",
          params: EventId,
          response: { 200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Boolean() })), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const deleted = await deleteEvents(ctx.db, caller.tenantId, { id: request.params.id });
        if (deleted === 0) throw ApiError.notFound("Delivery event", request.params.id);
        return ok({ id: request.params.id, deleted: true }, "Deleted");
      },
    );
  };
}
