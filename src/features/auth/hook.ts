import type { FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { ApiError } from "../../platform/http/errors.js";
import { type Authenticator, authenticate, refuseQueryCredentials } from "./authenticate.js";
import type { Permission } from "./permissions.js";
import type { Principal, UserPrincipal } from "./principal.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** No credential needed (login, health). */
    public?: boolean;
    /** Tied to a person: an API key gets 403 (spec 5.3). */
    person?: boolean;
    /** Checked before the body is validated or anything is looked up. */
    permission?: Permission;
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

/** The authenticated caller of a route that is not public. */
export function callerOf(request: FastifyRequest): Principal {
  if (!request.principal) throw ApiError.unauthorized("Authentication required");
  return request.principal;
}

export function personOf(request: FastifyRequest): UserPrincipal {
  const principal = callerOf(request);
  if (principal.kind !== "user") throw ApiError.forbidden("This endpoint needs a signed-in person");
  return principal;
}

export function requirePermission(principal: Principal, permission: Permission): void {
  if (!principal.permissions.has(permission)) {
    throw ApiError.forbidden(`Missing permission '${permission}'`);
  }
}

/**
 * Authenticates every route of the scope it is registered in, in onRequest so that a bad
 * credential is a 401 before the body is read or validated, and a missing permission a 403
 * before any lookup.
 */
export const authHook = fp<{ auth: Authenticator }>(
  async (app: FastifyInstance, { auth }) => {
    app.decorateRequest("principal", null);
    app.addHook("onRequest", async (request) => {
      refuseQueryCredentials(request.query);
      const config = request.routeOptions.config;
      if (config.public) return;
      const principal = await authenticate(auth, request.headers.authorization);
      request.principal = principal;
      if (principal.kind === "apiKey") auth.lastUsed.touch(principal.tokenId, request.ip, auth.clock.now());
      if (config.person && principal.kind !== "user") {
        throw ApiError.forbidden(
          "This endpoint is tied to a person and refuses API keys; sign in with POST /api/v1/auth and send Bearer <token>",
        );
      }
      if (config.permission) requirePermission(principal, config.permission);
    });
  },
  { name: "auth-hook" },
);
