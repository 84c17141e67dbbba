import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { sha256Hex } from "../../platform/crypto.js";
import { toApiError } from "../../platform/http/conventions.js";
import { NullableString } from "../../platform/http/nullable.js";
import { limitText, type Verdict } from "../../platform/http/rate-limit.js";
import { clickRoute } from "./click-route.js";
import {
  type ConversionInput,
  ConversionInputError,
  conversionTimeLimits,
  readConversion,
} from "./conversion-input.js";
import { recordPageView, waitForRecentClick } from "./page-views.js";
import type { Tracking } from "./tracking.js";

const PostbackParams = Type.Object({ postbackKey: Type.String({ maxLength: 200 }) });
// Untyped on purpose: a program may repeat a parameter or send a number, and the answer to
// anything wrong must be the postback's own JSON naming the field (readConversion does that).
const field = (description: string) => Type.Optional(Type.Unsafe<unknown>({ description }));
const PostbackFields = Type.Object(
  {
    clickId: field("The click id from the landing URL"),
    type: field("Conversion type"),
    value: field("Amount, at most 4 decimals"),
    currency: field("ISO 4217 code; required when value is not 0"),
    eventName: field("Event name; default the type"),
    externalId: field("The program's id of the event: makes the postback idempotent"),
    occurredAt: field("ISO 8601 date-time; default now"),
  },
  { additionalProperties: true },
);
const PostbackAnswer = Type.Object({
  status: Type.Enum(["ok", "duplicate", "error"]),
  message: Type.String(),
  conversionId: Type.Optional(Type.String()),
  attributed: Type.Optional(Type.Boolean()),
});
const PageViewBody = Type.Object({
  clickId: Type.String({ minLength: 1, maxLength: 100 }),
  url: Type.String({ minLength: 1, maxLength: 2048 }),
  title: Type.Optional(NullableString({ maxLength: 500 })),
  referrer: Type.Optional(NullableString({ maxLength: 2048 })),
});
const PageViewAnswer = Type.Object({
  status: Type.Enum(["ok", "error"]),
  message: Type.String(),
  id: Type.Optional(Type.String()),
});

function refuse(reply: FastifyReply, status: number, message: string) {
  return reply.status(status).send({ status: "error", message });
}

/** A 429 in these routes' own JSON, with Retry-After. */
function refuseTooMany(reply: FastifyReply, refused: Verdict, per: string) {
  reply.header("retry-after", refused.retryAfterS);
  return refuse(reply, 429, `Too many requests ${per}: ${limitText(refused)}; retry later`);
}

function fieldsOf(source: unknown): ConversionInput {
  if (typeof source !== "object" || source === null) return {};
  const fields = source as Record<string, unknown>;
  const first = (value: unknown) => (Array.isArray(value) ? value[0] : value);
  return {
    type: first(fields.type),
    clickId: first(fields.clickId),
    value: first(fields.value),
    currency: first(fields.currency),
    eventName: first(fields.eventName),
    externalId: first(fields.externalId),
    occurredAt: first(fields.occurredAt),
  };
}

/** The tracking endpoints outside /api: click redirect, postbacks from programs, page views. */
export function trackingPublicRoutes(ctx: AppContext, tracking: Tracking) {
  return async (app: FastifyInstance) => {
    // Programs post forms; browsers' sendBeacon posts text/plain holding JSON.
    app.addContentTypeParser("application/x-www-form-urlencoded", { parseAs: "string" }, (_request, body, done) => {
      done(null, Object.fromEntries(new URLSearchParams(String(body))));
    });
    app.addContentTypeParser("text/plain", { parseAs: "string" }, (_request, body, done) => {
      try {
        done(null, JSON.parse(String(body)));
      } catch {
        done(Object.assign(new Error("Body is not valid JSON"), { statusCode: 400 }), undefined);
      }
    });

    // These endpoints answer in their own JSON, errors included: `{ status: "error", message }`.
    app.setErrorHandler((error: FastifyError, request, reply) => {
      const { apiError, unexpected } = toApiError(error, request.id);
      if (unexpected) request.log.error({ err: error }, "unhandled error");
      return refuse(reply, apiError.status, apiError.message);
    });

    clickRoute(app, { cache: tracking.cache, clicks: tracking.clicks, clock: ctx.clock });

    // The API's limits (CONVERSION_MAX_FUTURE_S): a postback's occurredAt is held to the same rules.
    const timeLimits = conversionTimeLimits(ctx.config);
    const postback = async (key: string, fields: ConversionInput, reply: FastifyReply): Promise<FastifyReply> => {
      const [tenant] = await ctx.db.query<{ id: string }>("select id from tenants where postback_key_hash = $1", [
        sha256Hex(key),
      ]);
      if (!tenant) return refuse(reply, 404, "Unknown postback key");
      let item: ReturnType<typeof readConversion>;
      try {
        item = readConversion(fields, "", ctx.clock.now(), timeLimits);
      } catch (error) {
        if (error instanceof ConversionInputError) return refuse(reply, 400, error.message);
        throw error;
      }
      const [recorded] = await tracking.recordConversions(tenant.id, [item]);
      if (!recorded) throw new Error("recording a conversion returned nothing");
      const { conversion, duplicate } = recorded;
      return reply.status(duplicate ? 200 : 201).send({
        status: duplicate ? "duplicate" : "ok",
        message: duplicate
          ? "Duplicate externalId: nothing new was recorded"
          : conversion.attributed
            ? "Recorded"
            : "Recorded unattributed: no known click",
        conversionId: conversion.id,
        attributed: conversion.attributed,
      });
    };
    const postbackSchema = {
      tags: ["Tracking"],
      params: PostbackParams,
      response: {
        200: PostbackAnswer,
        201: PostbackAnswer,
        400: PostbackAnswer,
        404: PostbackAnswer,
        429: PostbackAnswer,
      },
    };
    const { limits } = app;
    // Per postback key, before the body is read or the key looked up; counted under the key's
    // hash, so the secret itself never reaches the counter store.
    const postbackBudget = async (
      request: FastifyRequest<{ Params: { postbackKey: string } }>,
      reply: FastifyReply,
    ) => {
      const { postbackPerMinute, windowMs } = limits.options;
      const key = `pb:${sha256Hex(request.params.postbackKey)}`;
      const budget = await limits.take(key, postbackPerMinute, windowMs);
      if (!budget.allowed) return refuseTooMany(reply, budget, "for this postback key");
    };

    app.get<{ Params: { postbackKey: string }; Querystring: Record<string, unknown> }>(
      "/postback/:postbackKey",
      {
        schema: {
          ...postbackSchema,
          summary: "Conversion postback from a program (query parameters)",
          description:
            "postbackKey is the tenant's postback secret. Parameters: clickId, type, value, currency, eventName, " +
            "externalId, occurredAt. Answers its own JSON, not the envelope.",
          querystring: PostbackFields,
        },
        onRequest: postbackBudget,
      },
      (request, reply) => postback(request.params.postbackKey, fieldsOf(request.query), reply),
    );

    app.post<{ Params: { postbackKey: string }; Body: Record<string, unknown> }>(
      "/postback/:postbackKey",
      {
        schema: {
          ...postbackSchema,
          summary: "Conversion postback from a program (JSON or form body)",
          body: PostbackFields,
        },
        onRequest: postbackBudget,
      },
      // Values in the query string count too, for programs that post with parameters in the URL.
      (request, reply) =>
        postback(
          request.params.postbackKey,
          fieldsOf({ ...(request.query as object), ...(request.body ?? {}) }),
          reply,
        ),
    );

    const cors = (reply: FastifyReply) =>
      reply
        .header("access-control-allow-origin", "*")
        .header("access-control-allow-methods", "POST, OPTIONS")
        .header("access-control-allow-headers", "content-type")
        .header("access-control-max-age", "86400");

    app.options("/collect", { schema: { hide: true } }, (_request, reply) => cors(reply).status(204).send());

    app.post<{ Body: { clickId: string; url: string; title?: string | null; referrer?: string | null } }>(
      "/collect",
      {
        schema: {
          tags: ["Tracking"],
          summary: "Record a page view against a click id (CORS open: called from landing pages)",
          body: PageViewBody,
          response: {
            201: PageViewAnswer,
            400: PageViewAnswer,
            404: PageViewAnswer,
            409: PageViewAnswer,
            429: PageViewAnswer,
          },
        },
        // CORS first, so that a refusal (429 included) still reaches the landing page's script.
        onRequest: async (request, reply) => {
          cors(reply);
          const { collectPerMinute, windowMs } = limits.options;
          const budget = await limits.take(`collect:ip:${request.ip}`, collectPerMinute, windowMs);
          if (!budget.allowed) return refuseTooMany(reply, budget, "from this address");
        },
      },
      async (request, reply) => {
        // PostgreSQL text cannot hold NUL; a page's title is not worth refusing the view for.
        const text = (value: string | null | undefined) => value?.replaceAll("\u0000", "") ?? null;
        const { clickId } = request.body;
        const url = text(request.body.url) ?? "";
        const title = text(request.body.title);
        const referrer = text(request.body.referrer);
        const now = ctx.clock.now();
        const { maxPageViewsPerClick, collectClickWaitMs } = limits.options;
        // The landing page can report before the click is written: a click this node still
        // buffers is written now; one just made on another node is waited for, briefly and
        // only when its id says it is that fresh. Anything else answers at once.
        if (tracking.clicks.holds(clickId)) await tracking.clicks.flush();
        else await waitForRecentClick(ctx.db, clickId, collectClickWaitMs);
        const outcome = await recordPageView(ctx.db, { clickId, url, title, referrer }, now, maxPageViewsPerClick);
        if (outcome === "unknown_click") return refuse(reply, 404, `Unknown click id '${clickId}'`);
        if (outcome === "limit_reached") {
          return refuse(
            reply,
            409,
            `Click '${clickId}' already has ${maxPageViewsPerClick} page views, the most kept per click`,
          );
        }
        return reply.status(201).send({ status: "ok", message: "Recorded", id: outcome.id });
      },
    );
  };
}
