import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { callerOf, PERMISSIONS, type Principal } from "../auth/index.js";

/** Token endpoints need account-admin (checked by the hook) and the tenant's api_tokens entitlement. */
function requireEntitlement(principal: Principal): void {
  if (!principal.entitlements.apiTokens) {
    throw ApiError.forbidden("The tenant's plan does not include API tokens (api_tokens entitlement is off)");
  }
}

export function apiTokenRoutes(): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/api-tokens/scopes",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["API tokens"],
          summary: "Scope strings the caller may grant: every permission the caller holds",
          response: { 200: Envelope(Type.Array(Type.String())), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        requireEntitlement(caller);
        return ok(PERMISSIONS.filter((p) => caller.permissions.has(p)));
      },
    );
  };
}
