import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyRequest } from "fastify";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import type { Queryable } from "../../platform/db/index.js";
import { conflictResponses, Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { actorOf } from "../audit/index.js";
import { callerOf, type Principal } from "../auth/index.js";
import { CatalogIdParams, type CatalogResource, type CatalogTable, RESOURCES } from "./resources.js";
import { type Change, createItem, deleteItem, getItem, listItems, updateItem } from "./service.js";

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type CatalogRouteDeps = Pick<AppContext, "db" | "clock" | "tracking">;

/**
 * What another feature adds to one resource (a traffic source's postback): a check of the body
 * and of the caller's rights for it before the transaction, which must not hold a connection
 * through a DNS lookup, work in the update's transaction once the row is written, and what a
 * caller may see of an item (fields that need rights beyond the catalog's are left out).
 */
export interface ResourceExtension {
  prepare(body: Record<string, unknown>, caller: Principal): Promise<void>;
  present(item: Record<string, unknown>, caller: Principal): Record<string, unknown>;
  updated(
    tx: Queryable,
    change: { tenantId: string; at: Date },
    item: Record<string, unknown>,
    body: Record<string, unknown>,
  ): Promise<void>;
}

export type CatalogExtensions = Partial<Record<CatalogTable, ResourceExtension>>;

/** list, get, create, update and delete for one catalog resource, all scoped to the caller's tenant. */
function resourceRoutes(
  ctx: CatalogRouteDeps,
  resource: CatalogResource,
  extension: ResourceExtension | undefined,
): FastifyPluginAsyncTypebox {
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
  const shown = (item: Record<string, unknown>, caller: Principal) => extension?.present(item, caller) ?? item;
  const changeOf = (request: FastifyRequest): Change => {
    const caller = callerOf(request);
    return { tenantId: caller.tenantId, actor: actorOf(caller), at: ctx.clock.now(), requestId: request.id };
  };

  return async (app) => {
    app.get(
      `/${path}`,
      {
        config: read,
        schema: {
          tags: [tag],
          summary: `The tenant's ${lower}s, oldest first; search matches names case-insensitively${resource.names ? " (a brand link's account and brand too)" : ""}`,
          querystring: resource.listQuery,
          response: { 200: PagedEnvelope(resource.item), ...errorResponses },
        },
      },
      async (request) => {
        const query = request.query as Record<string, unknown> & { offset: number; limit: number; search?: string };
        const caller = callerOf(request);
        const { items, total } = await listItems(ctx.db, resource, caller.tenantId, query);
        return paged(
          items.map((item) => shown(item, caller)),
          query,
          total,
        );
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
        const caller = callerOf(request);
        const item = await getItem(ctx.db, resource, caller.tenantId, request.params.id);
        if (!item) throw ApiError.notFound(label, request.params.id);
        return ok(shown(item, caller));
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
        await extension?.prepare(body, callerOf(request));
        const item = changed(change, await ctx.db.transaction((tx) => createItem(tx, resource, body, change)));
        return reply.status(201).send(ok(shown(item, callerOf(request)), "Created"));
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
        await extension?.prepare(body, callerOf(request));
        const item = changed(
          change,
          await ctx.db.transaction(async (tx) => {
            const updated = await updateItem(tx, resource, id, body, change);
            if (updated) await extension?.updated(tx, change, updated, body);
            return updated;
          }),
        );
        if (!item) throw ApiError.notFound(label, id);
        return ok(shown(item, callerOf(request)), "Updated");
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
export function catalogRoutes(ctx: CatalogRouteDeps, extensions: CatalogExtensions = {}): FastifyPluginAsyncTypebox {
  return async (app) => {
    for (const resource of RESOURCES) {
      await app.register(resourceRoutes(ctx, resource, extensions[resource.table]));
    }
  };
}
