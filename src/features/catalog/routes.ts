import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { conflictResponses, Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { actorOf } from "../audit/index.js";
import { callerOf } from "../auth/index.js";
import { checkPostback, postbackHostScreen, resumePostbacks } from "../source-postbacks/index.js";
import type { Postback } from "../source-postbacks/schemas.js";
import type { PostbackInput } from "../source-postbacks/settings.js";
import { CatalogIdParams, type CatalogResource, RESOURCES } from "./resources.js";
import { type Change, createItem, deleteItem, getItem, listItems, updateItem } from "./service.js";

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type CatalogRouteDeps = Pick<AppContext, "db" | "clock" | "tracking" | "config">;

/** list, get, create, update and delete for one catalog resource, all scoped to the caller's tenant. */
function resourceRoutes(ctx: CatalogRouteDeps, resource: CatalogResource): FastifyPluginAsyncTypebox {
  const { path, label, tag } = resource;
  const lower = label.toLowerCase();
  const read = { permission: "catalog.read" } as const;
  const write = { permission: "catalog.update" } as const;
  // The broadcast reaches other nodes (and, on PostgreSQL, this one) a moment after the commit;
  // this node's own cache forgets at once, so its next click already sees the change.
  const changed = <T>(change: Change, result: T): T => {
    ctx.tracking.cache.forgetTenant(change.tenantId);
    return result;
  };
  const changeOf = (request: FastifyRequest): Change => {
    const caller = callerOf(request);
    return { tenantId: caller.tenantId, actor: actorOf(caller), at: ctx.clock.now(), requestId: request.id };
  };
  // A traffic source's postback is checked (its host resolved) before the transaction, which must
  // not hold a connection through a DNS lookup; it is stored with its defaults filled.
  const hostScreen = postbackHostScreen(ctx.config);
  const prepare = async (body: Record<string, unknown>): Promise<void> => {
    if (resource.table !== "traffic_sources" || body.postback === undefined) return;
    body.postback = await checkPostback(body.postback as PostbackInput | null, hostScreen);
  };

  return async (app) => {
    app.get(
      `/${path}`,
      {
        config: read,
        schema: {
          tags: [tag],
          summary: `The tenant's ${lower}s, oldest first; search matches names case-insensitively`,
          querystring: resource.listQuery,
          response: { 200: PagedEnvelope(resource.item), ...errorResponses },
        },
      },
      async (request) => {
        const query = request.query as Record<string, unknown> & { offset: number; limit: number; search?: string };
        const { items, total } = await listItems(ctx.db, resource, callerOf(request).tenantId, query);
        return paged(items, query, total);
      },
    );

    app.get(
      `/${path}/:id`,
      {
        config: read,
        schema: {
          tags: [tag],
          summary: `One ${lower}`,
          params: CatalogIdParams,
          response: { 200: Envelope(resource.item), ...errorResponses },
        },
      },
      async (request) => {
        const item = await getItem(ctx.db, resource, callerOf(request).tenantId, request.params.id);
        if (!item) throw ApiError.notFound(label, request.params.id);
        return ok(item);
      },
    );

    app.post(
      `/${path}`,
      {
        config: write,
        schema: {
          tags: [tag],
          summary: `Create a ${lower}`,
          body: resource.create,
          response: { 201: Envelope(resource.item), ...conflictResponses },
        },
      },
      async (request, reply) => {
        const change = changeOf(request);
        const body = request.body as Record<string, unknown>;
        await prepare(body);
        const item = changed(change, await ctx.db.transaction((tx) => createItem(tx, resource, body, change)));
        return reply.status(201).send(ok(item, "Created"));
      },
    );

    app.patch(
      `/${path}/:id`,
      {
        config: write,
        schema: {
          tags: [tag],
          summary: `Change some fields of a ${lower}`,
          params: CatalogIdParams,
          body: resource.patch,
          response: { 200: Envelope(resource.item), ...conflictResponses },
        },
      },
      async (request) => {
        const change = changeOf(request);
        const body = request.body as Record<string, unknown>;
        const { id } = request.params;
        await prepare(body);
        const item = changed(
          change,
          await ctx.db.transaction(async (tx) => {
            const updated = await updateItem(tx, resource, id, body, change);
            // A postback saved enabled sends what waited Paused while it was disabled or removed.
            if (updated && resource.table === "traffic_sources" && body.postback !== undefined) {
              await resumePostbacks(tx, change.tenantId, id, updated.postback as Postback | null, change.at);
            }
            return updated;
          }),
        );
        if (!item) throw ApiError.notFound(label, id);
        return ok(item, "Updated");
      },
    );

    app.delete(
      `/${path}/:id`,
      {
        config: { permission: resource.deletePermission },
        schema: {
          tags: [tag],
          summary: `Delete a ${lower}${resource.inUse.length > 0 ? " (409 while others still use it)" : ""}`,
          params: CatalogIdParams,
          response: {
            200: Envelope(Type.Object({ id: Type.Integer(), deleted: Type.Boolean() })),
            ...conflictResponses,
          },
        },
      },
      async (request) => {
        const change = changeOf(request);
        const { id } = request.params;
        const deleted = changed(change, await ctx.db.transaction((tx) => deleteItem(tx, resource, id, change)));
        if (!deleted) throw ApiError.notFound(label, id);
        return ok({ id, deleted }, "Deleted");
      },
    );
  };
}

/** Brands, programs, accounts, brand links, traffic sources and trackers. */
export function catalogRoutes(ctx: CatalogRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const resource of RESOURCES) await app.register(resourceRoutes(ctx, resource));
  };
}
