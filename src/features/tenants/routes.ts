import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../../context.js";
import { Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { callerOf } from "../auth/index.js";
import { ListQuery, User, UserId } from "./schemas.js";
import { getUser, listUsers } from "./service.js";

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type UserRouteDeps = Pick<AppContext, "db">;

/** The people of the caller's tenant (read-only; people are managed on the admin surface). */
export function userRoutes(ctx: UserRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/users",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Users"],
          summary: "People of the caller's tenant",
          querystring: ListQuery,
          response: { 200: PagedEnvelope(User), ...errorResponses },
        },
      },
      async (request) => {
        const { items, total } = await listUsers(ctx.db, callerOf(request).tenantId, request.query);
        return paged(items, request.query, total);
      },
    );

    app.get(
      "/users/:id",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Users"],
          summary: "One person of the caller's tenant",
          params: UserId,
          response: { 200: Envelope(User), ...errorResponses },
        },
      },
      async (request) => {
        const { id } = request.params;
        const user = await getUser(ctx.db, callerOf(request).tenantId, id);
        if (!user) throw ApiError.notFound("User", id);
        return ok(user);
      },
    );
  };
}
