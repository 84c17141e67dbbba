import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { sha256Hex } from "../../platform/crypto.js";
import { toApiError } from "../../platform/http/conventions.js";
import type { FieldError } from "../../platform/http/errors.js";
import { NullableString } from "../../platform/http/nullable.js";
import { limitText, type Verdict } from "../../platform/http/rate-limit.js";
import { recordedLines, refusedLines, writePostbackLog } from "../postback-log/index.js";
import { tenantOfPostbackKey } from "../tenants/index.js";
import { clickRoute } from "./click-route.js";
import {
  type ConversionInput,
  ConversionInputError,
  conversionTimeLimits,
  readConversion,
} from "./conversion-input.js";
import { POSTBACK_ORIGIN } from "./conversion-status.js";
import { canonicalTypeName } from "./conversion-types.js";
import { recordPageView, waitForRecentClick } from "./page-views.js";
import { ConversionStatusName, RecordableTypeName } from "./schemas.js";
import type { Tracking } from "./tracking.js";

const PostbackParams = Type.Object({ postbackKey: Type.String({ maxLength: 200 }) });
// Untyped on purpose: a program may repeat a parameter or send a number, and the answer to
// anything wrong must be the postback's own JSON naming the field (readConversion does that).
const field = (description: string) => Type.Optional(Type.Unsafe<unknown>({ description }));
const PostbackFields = Type.Object(
  {
    clickId: field("The click id from the landing URL; an unfilled macro such as <clickId> or {clickId} is refused"),
    // The enum documents the accepted names; the route's preValidation has already rewritten a
    // name in any case to the type's own spelling (and a repeated parameter to its first value).
    type: Type.Optional(RecordableTypeName),
    value: field("Amount, at most 4 decimals; absent: recorded as null (empty in postbacks, 0 in reports)"),
    currency: field("ISO 4217 code; absent with a value: the tenant's defaultCurrency (USD unless set)"),
    eventName: field("Event name; default the type"),
    externalId: field("The program's id of the event: makes the postback idempotent"),
    occurredAt: field("ISO 8601 date-time; default now"),
    status: field(
      "pending, approved, rejected or reversed (any case); approved when absent. Repeating an externalId with another " +
        "status changes the first record's status",
    ),
  },
  { additionalProperties: true },
);
// The same facts POST /api/v1/conversions answers: id and duplicate (status kept for programs
// that already read it); an error carries status and message only.
const PostbackAnswer = Type.Object({
  status: Type.Enum(["ok", "duplicate", "error"]),
  message: Type.String(),
  id: Type.Optional(Type.String({ description: "The conversion's id (the first record's when duplicate)" })),
  conversionId: Type.Optional(Type.String({ description: "Same as id (kept for existing integrations)" })),
  duplicate: Type.Optional(
    Type.Boolean({ description: "True when externalId was seen before: nothing new was recorded" }),
  ),
  type: Type.Optional(Type.Unsafe<string>({ ...RecordableTypeName })),
  value: Type.Optional(
    Type.Unsafe<number | null>({ type: ["number", "null"], description: "Null when none was sent" }),
  ),
  currency: Type.Optional(Type.Unsafe<string | null>({ type: ["string", "null"] })),
  attributed: Type.Optional(Type.Boolean()),
  conversionStatus: Type.Optional(ConversionStatusName),
  statusChanged: Type.Optional(
    Type.Boolean({ description: "True when this repeat of an externalId changed the first record's status" }),
  ),
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

/**
 * Before the schema's enum is checked: `type` in any case becomes the type's own spelling, a
 * repeated `type` its first value (as fieldsOf reads every field). A name that means no
 * recordable type is left as sent, for the enum to refuse with the accepted names.
 */
function canonicalizeType(source: unknown): void {
  if (typeof source !== "object" || source === null) return;
  const fields = source as Record<string, unknown>;
  const sent = Array.isArray(fields.type) ? fields.type[0] : fields.type;
  if (sent === undefined) return;
  fields.type = typeof sent === "string" ? canonicalTypeName(sent) : sent;
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
    status: first(fields.status),
  };
}

/**
 * What a postback call sent, for its log line: the query string as it came (read from the URL:
 * the route has rewritten a type's spelling in the parsed one) and, posted, the body's fields.
 */
function sentOf(request: FastifyRequest): Record<string, unknown> {
  const body = request.body;
  const url = request.raw.url ?? "";
  const query = url.includes("?") ? url.slice(url.indexOf("?") + 1) : "";
  return {
    ...Object.fromEntries(new URLSearchParams(query)),
    ...(typeof body === "object" && body !== null && !Array.isArray(body) ? body : {}),
  };
}

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type TrackingPublicRouteDeps = Pick<AppContext, "db" | "clock" | "config" | "usage">;

/** The tracking endpoints outside /api: click redirect, postbacks from programs, page views. */
export function trackingPublicRoutes(ctx: TrackingPublicRouteDeps, tracking: Tracking) {
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

    clickRoute(app, { tracking, clock: ctx.clock, usage: ctx.usage });

    const { limits } = app;
    // The API's limits (CONVERSION_MAX_FUTURE_S): a postback's occurredAt is held to the same rules.
    const timeLimits = conversionTimeLimits(ctx.config);
    const via = "postback" as const;
    /** The tenant whose postback key this is, or null. */
    const tenantOfKey = async (key: string): Promise<string | null> => {
      tracking.postbackKeyLookups += 1;
      // The current key, or the one it replaced while its grace period runs.
      return tenantOfPostbackKey(ctx.db, key, ctx.clock.now());
    };
    // A call the route's schema refused (a type no conversion has) is logged for the key's tenant;
    // with an unknown key it is not: that refusal never got as far as the key.
    const logRefusedCall = async (
      request: FastifyRequest<{ Params: { postbackKey: string } }>,
      error: FastifyError,
    ): Promise<void> => {
      const { apiError } = toApiError(error, request.id);
      if (apiError.status !== 400) return;
      const tenantId = await tenantOfKey(request.params.postbackKey);
      if (tenantId === null) return;
      const errors = (apiError.data?.errors as FieldError[] | undefined) ?? [];
      const call = { tenantId, at: ctx.clock.now(), via };
      await writePostbackLog(ctx.db, request.log, refusedLines(call, [sentOf(request)], errors, apiError.message));
    };
    const postback = async (
      request: FastifyRequest,
      key: string,
      fields: ConversionInput,
      reply: FastifyReply,
    ): Promise<FastifyReply> => {
      const tenantId = await tenantOfKey(key);
      const now = ctx.clock.now();
      const sent = [sentOf(request)];
      if (tenantId === null) {
        // An unknown key is a refused credential of the address (AUTH_FAILURES_PER_IP_PER_MINUTE),
        // which also bounds how many such calls an address gets into the log.
        await limits.credentialFailed(request.ip);
        const unknown = [{ path: "postbackKey", message: "is not the postback key of any tenant" }];
        await writePostbackLog(ctx.db, request.log, refusedLines({ tenantId, at: now, via }, sent, unknown, ""));
        return refuse(reply, 404, "Unknown postback key");
      }
      const call = { tenantId, at: now, via };
      let item: ReturnType<typeof readConversion>;
      try {
        item = readConversion(fields, "", now, timeLimits);
      } catch (error) {
        if (error instanceof ConversionInputError) {
          const errors = [{ path: error.path, message: error.reason }];
          await writePostbackLog(ctx.db, request.log, refusedLines(call, sent, errors, error.message));
          return refuse(reply, 400, error.message);
        }
        throw error;
      }
      const [recorded] = await tracking.recordConversions(tenantId, [item], POSTBACK_ORIGIN);
      if (!recorded) throw new Error("recording a conversion returned nothing");
      await writePostbackLog(ctx.db, request.log, recordedLines(call, sent, [recorded]));
      const { conversion, duplicate, statusChanged } = recorded;
      return reply.status(duplicate ? 200 : 201).send({
        status: duplicate ? "duplicate" : "ok",
        message: statusChanged
          ? `Duplicate externalId: the first record's status was changed to ${conversion.status}`
          : duplicate
            ? "Duplicate externalId: this is the first record; nothing new was recorded"
            : conversion.attributed
              ? "Recorded"
              : "Recorded unattributed: no known click",
        id: conversion.id,
        conversionId: conversion.id,
        duplicate,
        type: conversion.type,
        value: conversion.value,
        currency: conversion.currency,
        attributed: conversion.attributed,
        conversionStatus: conversion.status,
        statusChanged,
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
    // Per postback key, before the body is read or the key looked up; counted under the key's
    // hash, so the secret itself never reaches the counter store. First, an address past its
    // refused credentials (unknown keys here, bad API keys anywhere) is refused without either.
    const postbackBudget = async (
      request: FastifyRequest<{ Params: { postbackKey: string } }>,
      reply: FastifyReply,
    ) => {
      const overBudget = limits.credentialBudget(request.ip);
      if (overBudget !== null) return refuseTooMany(reply, overBudget, "with refused credentials from this address");
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
        preValidation: async (request) => canonicalizeType(request.query),
        onError: async (request, _reply, error) => logRefusedCall(request, error),
      },
      (request, reply) => postback(request, request.params.postbackKey, fieldsOf(request.query), reply),
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
        preValidation: async (request) => {
          canonicalizeType(request.query);
          canonicalizeType(request.body);
        },
        onError: async (request, _reply, error) => logRefusedCall(request, error),
      },
      // Values in the query string count too, for programs that post with parameters in the URL.
      (request, reply) =>
        postback(
          request,
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
