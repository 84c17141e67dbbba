import type { FastifyRequest } from "fastify";
import { ApiError } from "../../platform/http/errors.js";
import type { Principal, UserPrincipal } from "./principal.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /**
     * Any authenticated caller of the tenant may call it, with no particular permission (`/me`,
     * sign-out). Declared, not implied by a missing `permission`: every /api/v1 route says who may
     * call it (`public`, `permission` or this), published as `x-permission` and checked by the
     * route guard test.
     */
    anyCaller?: true;
  }
}

// Request helpers for route handlers, apart from auth's own routes and hook: a route of any
// feature imports these without loading the login route (and what it imports) along with them.
// `request.principal` is set by the auth hook (hook.ts) before any handler runs.

/** The authenticated caller of a route that is not public. */
export function callerOf(request: FastifyRequest): Principal {
  if (!request.principal) throw ApiError.unauthorized("Authentication required");
  return request.principal;
}

/** The signed-in person calling a route; an API key gets a 403. */
export function personOf(request: FastifyRequest): UserPrincipal {
  const principal = callerOf(request);
  if (principal.kind !== "user") throw ApiError.forbidden("This endpoint needs a signed-in person");
  return principal;
}
