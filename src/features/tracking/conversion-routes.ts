import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { toApiError } from "../../platform/http/conventions.js";
import { parseDateRange } from "../../platform/http/dates.js";
import { Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError, type FieldError } from "../../platform/http/errors.js";
import { requireTimeZone } from "../../platform/time-zone.js";
import { callerOf } from "../auth/index.js";
import { recordedLines, refusedLines, writePostbackLog } from "../postback-log/index.js";
import { tenantTimeZone } from "../tenants/index.js";
import {
  type ConversionInput,
  ConversionInputError,
  type ConversionTimeLimits,
  conversionTimeLimits,
  readConversion,
  type ValidConversion,
} from "./conversion-input.js";
import { parseIdList, parseTypeList } from "./conversion-list-params.js";
import { conversionHistory, getConversion, listConversions } from "./conversion-service.js";
import { callerOrigin, parseStatusList } from "./conversion-status.js";
import { canonicalTypeName } from "./conversion-types.js";
import { deliveriesOf } from "./deliveries.js";
import { pageViewsFor } from "./page-views.js";
import {
  ConversionDelivery as ConversionDeliverySchema,
  ConversionDetail,
  ConversionId,
  ConversionListItem,
  ConversionListQuery,
  Conversion as ConversionSchema,
  MAX_CONVERSION_BATCH,
  NewConversionsBody,
  RecordedBatch,
  RecordedConversion,
  StatusChangeBody,
  StatusHistoryEntry,
} from "./schemas.js";
import type { Tracking } from "./tracking.js";

/** Reads every item, so a bad one is a 400 naming it (`items[3].currency`) before anything is written. */
export function readConversions(
  inputs: ConversionInput[],
  batch: boolean,
  now: Date,
  limits: ConversionTimeLimits,
): ValidConversion[] {
  try {
    return inputs.map((input, i) => readConversion(input, batch ? `items[${i}].` : "", now, limits));
  } catch (error) {
    if (error instanceof ConversionInputError) throw ApiError.validation(error.path, error.reason);
    throw error;
  }
}

/**
 * Type names in any case (`signup` is a Signup): rewritten to the type's own spelling before
 * the body's schema (an enum of the recordable types) is checked, so the enum stays exact in
 * the OpenAPI document and a name that means no recordable type is refused by it, listed.
 */
function canonicalizeTypes(body: unknown): void {
  const fix = (item: unknown) => {
    if (typeof item !== "object" || item === null || Array.isArray(item)) return;
    const fields = item as Record<string, unknown>;
    if (typeof fields.type === "string") fields.type = canonicalTypeName(fields.type);
  };
  fix(body);
  const items = typeof body === "object" && body !== null ? (body as Record<string, unknown>).items : undefined;
  if (Array.isArray(items)) items.forEach(fix);
}

/**
 * Logs the items of a refused POST /conversions (a 400: a field error, a body that is no JSON) in
 * the postback log, when the caller is known: nothing of it was recorded, and the log says why.
 */
async function logRefusedItems(ctx: ConversionRouteDeps, request: FastifyRequest, error: Error): Promise<void> {
  const { apiError } = toApiError(error, request.id);
  if (apiError.status !== 400 || !request.principal) return;
  const body: unknown = request.body;
  const items = typeof body === "object" && body !== null ? (body as Record<string, unknown>).items : undefined;
  const sent = Array.isArray(items) ? items.slice(0, MAX_CONVERSION_BATCH) : [body];
  const errors = (apiError.data?.errors as FieldError[] | undefined) ?? [];
  const call = { tenantId: request.principal.tenantId, at: ctx.clock.now(), via: "api" as const };
  await writePostbackLog(ctx.db, request.log, refusedLines(call, sent, errors, apiError.message));
}

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type ConversionRouteDeps = Pick<AppContext, "db" | "clock" | "config">;

/** POST/GET /conversions: conversions recorded by API, one or a batch, and read back. */
export function conversionRoutes(ctx: ConversionRouteDeps, tracking: Tracking): FastifyPluginAsyncTypebox {
  // This app's CONVERSION_MAX_FUTURE_S: another app in the same process may have another.
  const limits = conversionTimeLimits(ctx.config);
  return async (app) => {
    app.post(
      "/conversions",
      {
        config: { permission: "conversions.update" },
        preValidation: async (request) => canonicalizeTypes(request.body),
        // A refused call is logged too (its items, each with why), for the caller's integrator.
        onError: async (request, _reply, error) => logRefusedItems(ctx, request, error),
        schema: {
          tags: ["Conversions"],
          summary: "Record one conversion, or a batch of up to 1,000 as { items: [...] }",
          description:
            "Written synchronously in one transaction. A repeated externalId answers the first record with " +
            "duplicate: true and records nothing. A clickId unknown in the tenant is recorded with attributed: false; " +
            "a clickId that is an unfilled macro (<clickId>, {clickId}, %7BclickId%7D ...) is refused. A value " +
            "without a currency is in the tenant's defaultCurrency; no value is recorded as null (reports count 0).",
          body: NewConversionsBody,
          response: {
            200: Envelope(Type.Union([RecordedConversion, RecordedBatch])),
            201: Envelope(Type.Union([RecordedConversion, RecordedBatch])),
            ...errorResponses,
          },
        },
      },
      async (request, reply) => {
        const tenantId = callerOf(request).tenantId;
        const { items, ...single } = request.body;
        const batch = items !== undefined;
        if (batch && Object.keys(single).length > 0) {
          throw ApiError.validation(Object.keys(single)[0] ?? "items", "must not be sent beside items");
        }
        if (!batch && single.type === undefined) throw ApiError.validation("type", "is required");
        const sent = batch ? items : [single];
        const now = ctx.clock.now();
        const valid = readConversions(sent, batch, now, limits);
        const recorded = await tracking.recordConversions(tenantId, valid, callerOrigin(callerOf(request)));
        await writePostbackLog(ctx.db, request.log, recordedLines({ tenantId, at: now, via: "api" }, sent, recorded));
        const answers = recorded.map((r) => ({
          ...r.conversion,
          duplicate: r.duplicate,
          statusChanged: r.statusChanged,
        }));
        const created = answers.filter((a) => !a.duplicate).length;
        const status = created > 0 ? 201 : 200;
        if (batch) {
          const message = `${created} recorded, ${answers.length - created} duplicate`;
          return reply
            .status(status)
            .send(ok({ items: answers, created, duplicates: answers.length - created }, message));
        }
        const [answer] = answers;
        if (!answer) throw new Error("recording a conversion returned nothing");
        const note = answer.statusChanged
          ? `Duplicate externalId: the first record's status was changed to ${answer.status}`
          : answer.duplicate
            ? "Duplicate externalId: this is the first record; nothing new was recorded"
            : answer.attributed
              ? "Recorded"
              : "Recorded unattributed: no known click";
        return reply.status(status).send(ok(answer, note));
      },
    );

    app.get(
      "/conversions",
      {
        config: { permission: "conversions.read" },
        schema: {
          tags: ["Conversions"],
          summary: "Conversions, newest first; the date range applies to occurredAt",
          description:
            "status, type and trafficSourceId: comma lists (statuses and types in any case), every value when " +
            "absent; clickId and externalId: exact. Each item names its catalog items (names) when the caller has " +
            "catalog.read, else names are null.",
          querystring: ConversionListQuery,
          response: { 200: PagedEnvelope(ConversionListItem), ...errorResponses },
        },
      },
      async (request) => {
        const { dateFrom, dateTo, timeZone, status, type, trafficSourceId, ...rest } = request.query;
        const caller = callerOf(request);
        const { tenantId } = caller;
        const zone =
          timeZone === undefined ? await tenantTimeZone(ctx.db, tenantId) : requireTimeZone("timeZone", timeZone);
        const { from, to } = parseDateRange(["dateFrom", "dateTo"], dateFrom, dateTo, zone);
        const { items, total } = await listConversions(ctx.db, tenantId, {
          ...rest,
          type: parseTypeList("type", type),
          trafficSourceId: parseIdList("trafficSourceId", trafficSourceId),
          status: parseStatusList("status", status),
          from,
          to,
          // Names only for a caller who may read the catalog: a conversions.read key learns no more.
          names: caller.permissions.has("catalog.read"),
        });
        return paged(items, request.query, total);
      },
    );

    app.get(
      "/conversions/:id",
      {
        config: { permission: "conversions.read" },
        schema: {
          tags: ["Conversions"],
          summary: "One conversion with the page views that led to it",
          params: ConversionId,
          response: { 200: Envelope(ConversionDetail), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const { id } = request.params;
        const conversion = await getConversion(ctx.db, tenantId, id);
        if (!conversion) throw ApiError.notFound("Conversion", id);
        const pageViews =
          conversion.clickId === null
            ? []
            : await pageViewsFor(ctx.db, tenantId, conversion.clickId, new Date(conversion.occurredAt));
        return ok({ ...conversion, pageViews });
      },
    );

    app.get(
      "/conversions/:id/deliveries",
      {
        config: { permission: "conversions.read" },
        schema: {
          tags: ["Conversions"],
          summary:
            "Every place a conversion was queued for: outgoing webhooks, its traffic source's postback, Google Ads",
          description:
            "Oldest first, at most 200 per destination. A change of status sent to a destination that takes status " +
            "changes is one more delivery, carrying that status (conversionStatus). Each destination's own history " +
            "(attempts, answers) is under that destination's routes, by the delivery's id.",
          params: ConversionId,
          response: { 200: Envelope(Type.Array(ConversionDeliverySchema)), ...errorResponses },
        },
      },
      async (request) => {
        const { tenantId } = callerOf(request);
        const { id } = request.params;
        if (!(await getConversion(ctx.db, tenantId, id))) throw ApiError.notFound("Conversion", id);
        return ok(await deliveriesOf(ctx.db, tracking.destinations, tenantId, id));
      },
    );

    app.patch(
      "/conversions/:id",
      {
        config: { permission: "conversions.update" },
        preValidation: async (request) => lowerCaseStatus(request.body),
        schema: {
          tags: ["Conversions"],
          summary: "Change a conversion's status (pending, approved, rejected, reversed), with a reason",
          description:
            "Kept in its history; a move into or out of pending/approved changes the reports of the day it " +
            "occurred. Outgoing webhooks and traffic-source postbacks with statusChanges, the operational " +
            "webhooks (conversion.status_changed) and Google Ads are told. The same status again changes nothing.",
          params: ConversionId,
          body: StatusChangeBody,
          response: { 200: Envelope(ConversionSchema), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const { id } = request.params;
        const { status } = request.body;
        const reason = request.body.reason?.trim() || null;
        const result = await tracking.changeStatus(caller.tenantId, id, {
          status,
          reason,
          origin: callerOrigin(caller),
        });
        if (!result) throw ApiError.notFound("Conversion", id);
        return ok(
          result.conversion,
          result.changed ? `Status changed to ${status}` : `The status was already ${status}: nothing changed`,
        );
      },
    );

    app.get(
      "/conversions/:id/history",
      {
        config: { permission: "conversions.read" },
        schema: {
          tags: ["Conversions"],
          summary: "Every status of a conversion, oldest first: its recording, then each change with who and why",
          params: ConversionId,
          response: { 200: Envelope(Type.Array(StatusHistoryEntry)), ...errorResponses },
        },
      },
      async (request) => {
        const { tenantId } = callerOf(request);
        const { id } = request.params;
        const history = await conversionHistory(ctx.db, tenantId, id);
        if (!history) throw ApiError.notFound("Conversion", id);
        return ok(history);
      },
    );
  };
}

/** A status in any case (`Reversed`): lower-cased before the body's schema (an enum) is checked. */
function lowerCaseStatus(body: unknown): void {
  if (typeof body !== "object" || body === null || Array.isArray(body)) return;
  const fields = body as Record<string, unknown>;
  if (typeof fields.status === "string") fields.status = fields.status.trim().toLowerCase();
}
