import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import type { Queryable } from "../../platform/db/index.js";
import { conflictResponses, Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { actorOf } from "../audit/index.js";
import { callerOf } from "../auth/index.js";
import { getUpload, listQueue, listUploads } from "./history.js";
import type { GoogleAds } from "./index.js";
import {
  ConnectionTest,
  GoogleAdsBody,
  GoogleAdsIntegration,
  QueueItem,
  QueueQuery,
  SourceParams,
  Upload,
  UploadDetail,
  UploadParams,
  UploadQuery,
} from "./schemas.js";
import { deleteIntegration, getIntegration, type IntegrationChange, saveIntegration, sourceExists } from "./service.js";
import { auditConnectionTest, testConnection } from "./test-connection.js";

const TAG = "Google Ads";
const PATH = "/traffic-sources/:id/google-ads";

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type GoogleAdsRouteDeps = Pick<AppContext, "db" | "clock" | "config">;

/** 404 for a traffic source the tenant does not have, then for one without an integration. */
async function integrationOf(db: Queryable, tenantId: string, sourceId: number, box?: GoogleAds["box"]) {
  const integration = await getIntegration(db, tenantId, sourceId, box);
  if (integration) return integration;
  if (!(await sourceExists(db, tenantId, sourceId))) throw ApiError.notFound("Traffic source", sourceId);
  throw ApiError.notFound("Google Ads integration of traffic source", sourceId);
}

/**
 * A traffic source's Google Ads integration and its upload history. It sends conversions to an
 * account the caller chooses, with credentials the caller gives, as an outgoing webhook sends
 * them to a host: read with webhooks.read, set and removed with webhooks.update (the catalog's
 * rights alone would let a catalog editor send every conversion away).
 */
export function googleAdsRoutes(ctx: GoogleAdsRouteDeps, ads: Pick<GoogleAds, "box">): FastifyPluginAsyncTypebox {
  const read = { permission: "webhooks.read" } as const;
  const write = { permission: "webhooks.update" } as const;
  const changeOf = (request: FastifyRequest): IntegrationChange => {
    const caller = callerOf(request);
    return {
      tenantId: caller.tenantId,
      actor: actorOf(caller),
      at: ctx.clock.now(),
      requestId: request.id,
      box: ads.box,
    };
  };

  return async (app) => {
    app.put(
      PATH,
      {
        config: write,
        schema: {
          tags: [TAG],
          summary:
            "Set the traffic source's Google Ads offline-conversion upload; the answer never shows the client secret or refresh token",
          params: SourceParams,
          body: GoogleAdsBody,
          // 409: the stored secrets no longer open and the save needs them (see saveIntegration).
          response: { 200: Envelope(GoogleAdsIntegration), 201: Envelope(GoogleAdsIntegration), ...conflictResponses },
        },
      },
      async (request, reply) => {
        const change = changeOf(request);
        const saved = await ctx.db.transaction((tx) => saveIntegration(tx, request.params.id, request.body, change));
        if (!saved) throw ApiError.notFound("Traffic source", request.params.id);
        return saved.created
          ? reply.status(201).send(ok(saved.integration, "Created"))
          : ok(saved.integration, "Updated");
      },
    );

    app.get(
      PATH,
      {
        config: read,
        schema: {
          tags: [TAG],
          summary: "The traffic source's Google Ads integration (the client id only of its credentials)",
          params: SourceParams,
          response: { 200: Envelope(GoogleAdsIntegration), ...errorResponses },
        },
      },
      async (request) => ok(await integrationOf(ctx.db, callerOf(request).tenantId, request.params.id, ads.box)),
    );

    app.delete(
      PATH,
      {
        config: write,
        schema: {
          tags: [TAG],
          summary: "Remove the integration with its queue and upload history; nothing more is uploaded",
          params: SourceParams,
          response: {
            200: Envelope(Type.Object({ trafficSourceId: Type.Integer(), deleted: Type.Boolean() })),
            ...errorResponses,
          },
        },
      },
      async (request) => {
        const change = changeOf(request);
        const deleted = await ctx.db.transaction((tx) => deleteIntegration(tx, request.params.id, change));
        if (!deleted) await integrationOf(ctx.db, change.tenantId, request.params.id);
        return ok({ trafficSourceId: request.params.id, deleted: true }, "Deleted");
      },
    );

    app.get(
      `${PATH}/uploads`,
      {
        config: read,
        schema: {
          tags: [TAG],
          summary: "The integration's uploads to Google, newest first",
          params: SourceParams,
          querystring: UploadQuery,
          response: { 200: PagedEnvelope(Upload), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        await integrationOf(ctx.db, tenantId, request.params.id);
        const { items, total } = await listUploads(ctx.db, tenantId, request.params.id, request.query);
        return paged(items, request.query, total);
      },
    );

    app.get(
      `${PATH}/queue`,
      {
        config: read,
        schema: {
          tags: [TAG],
          summary:
            "The conversions not taken into an upload, oldest first: queued, or withdrawn because their conversion was rejected or reversed first",
          params: SourceParams,
          querystring: QueueQuery,
          response: { 200: PagedEnvelope(QueueItem), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        await integrationOf(ctx.db, tenantId, request.params.id);
        const { items, total } = await listQueue(ctx.db, tenantId, request.params.id, request.query);
        return paged(items, request.query, total);
      },
    );

    app.get(
      `${PATH}/uploads/:uploadId`,
      {
        config: read,
        schema: {
          tags: [TAG],
          summary: "One upload with each conversion it held and what became of it",
          params: UploadParams,
          response: { 200: Envelope(UploadDetail), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        await integrationOf(ctx.db, tenantId, request.params.id);
        const upload = await getUpload(ctx.db, tenantId, request.params.id, request.params.uploadId);
        if (!upload) throw ApiError.notFound("Upload", request.params.uploadId);
        return ok(upload);
      },
    );

    app.post(
      `${PATH}/test`,
      {
        config: write,
        schema: {
          tags: [TAG],
          summary: "Try the saved settings against Google: the token exchange and a validate-only ingest",
          description:
            "Exchanges the stored refresh token for an access token, then sends Google one sample event per mapped " +
            "conversion action with `validateOnly: true`: the credentials, account, login account and actions are " +
            "checked and nothing is kept by Google or recorded here (no upload). ok:false names Google's reason. " +
            "A few tests per source per minute (SIMULATE_PER_WEBHOOK_PER_MINUTE); past that, 429 with Retry-After.",
          params: SourceParams,
          response: { 200: Envelope(ConnectionTest), ...errorResponses },
        },
      },
      async (request, reply) => {
        const change = changeOf(request);
        const sourceId = request.params.id;
        await integrationOf(ctx.db, change.tenantId, sourceId);
        const key = `google-ads-test:${change.tenantId}:${sourceId}`;
        await app.limits.takeTrialSend(reply, key, "connection tests of this integration");
        const result = await testConnection(ctx.db, change.tenantId, sourceId, {
          box: ads.box,
          endpoints: ctx.config.google,
          now: () => ctx.clock.now(),
        });
        await auditConnectionTest(ctx.db, { ...change, sourceId, result, at: ctx.clock.now() });
        return ok(result, result.ok ? "Google accepted the sample" : "The connection test failed");
      },
    );
  };
}
