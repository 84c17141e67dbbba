import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { conflictResponses, Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { couldBeId, PathId } from "../../platform/http/path-ids.js";
import { actorOf } from "../audit/index.js";
import { callerOf, PERMISSIONS } from "../auth/index.js";
import { ApiTokenSchema, CreatedApiToken, NewApiTokenBody, TokenListQuery } from "./schemas.js";
import { createApiToken, deleteApiToken, getApiToken, listApiTokens } from "./service.js";

const TokenId = PathId("API key");

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type ApiTokenRouteDeps = Pick<AppContext, "db" | "clock" | "apiKeys">;

/**
 * /api-tokens: every endpoint needs account.admin (the auth hook, 403 first) and the tenant's
 * api_tokens entitlement (403, before the body is validated).
 */
export function apiTokenRoutes(ctx: ApiTokenRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.addHook("onRequest", async (request) => {
      if (!callerOf(request).entitlements.apiTokens) {
        throw ApiError.forbidden("The tenant's plan does not include API tokens (api_tokens entitlement is off)");
      }
    });
    const config = { permission: "account.admin" } as const;

    app.post(
      "/api-tokens",
      {
        config,
        schema: {
          tags: ["API tokens"],
          summary: "Create an API key; the raw key is in this answer only",
          description:
            "409 when the name is taken or the tenant already holds the most unexpired keys allowed (100 by default).",
          body: NewApiTokenBody,
          response: { 201: Envelope(CreatedApiToken), ...conflictResponses },
        },
      },
      async (request, reply) => {
        const caller = callerOf(request);
        const { expirationDate, ...rest } = request.body;
        const created = await ctx.db.transaction((tx) =>
          createApiToken(
            tx,
            caller.tenantId,
            { ...rest, expirationDate: expirationDate === undefined ? undefined : new Date(expirationDate) },
            actorOf(caller),
            ctx.clock.now(),
            caller.permissions,
            app.limits.options.maxApiKeysPerTenant,
          ),
        );
        return reply.status(201).send(ok(created, "Created"));
      },
    );

    app.get(
      "/api-tokens",
      {
        config,
        schema: {
          tags: ["API tokens"],
          summary: "The tenant's API keys, newest first (never the raw keys)",
          querystring: TokenListQuery,
          response: { 200: PagedEnvelope(ApiTokenSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { items, total } = await listApiTokens(ctx.db, callerOf(request).tenantId, request.query);
        return paged(items, request.query, total);
      },
    );

    app.get(
      "/api-tokens/scopes",
      {
        config,
        schema: {
          tags: ["API tokens"],
          summary: "Scope strings the caller may grant: every permission the caller holds",
          response: { 200: Envelope(Type.Array(Type.String())), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        return ok(PERMISSIONS.filter((p) => caller.permissions.has(p)));
      },
    );

    app.get(
      "/api-tokens/:id",
      {
        config,
        schema: {
          tags: ["API tokens"],
          summary: "One API key (never the raw key)",
          params: TokenId,
          response: { 200: Envelope(ApiTokenSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { id } = request.params;
        const token = await getApiToken(ctx.db, callerOf(request).tenantId, id);
        if (!token) throw ApiError.notFound("API token", id);
        return ok(token);
      },
    );

    app.delete(
      "/api-tokens/:id",
      {
        // It never errors on an unknown id, whatever the id: 200 `deleted: false`.
        config: { ...config, anyPathId: true },
        schema: {
          tags: ["API tokens"],
          summary:
            "Revoke an API key: refused at once here, on every node within a second; 200 whether or not it existed",
          params: TokenId,
          response: { 200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Boolean() })), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const { id } = request.params;
        const deleted =
          couldBeId(id) &&
          (await ctx.db.transaction((tx) => deleteApiToken(tx, caller.tenantId, id, actorOf(caller), ctx.clock.now())));
        // This node stops accepting the key now; the others hear it through the broadcast.
        if (deleted) ctx.apiKeys.forget(id);
        return ok({ id, deleted }, deleted ? "Deleted" : "No such key; nothing to delete");
      },
    );
  };
}
