import type { FastifyContextConfig, FastifyInstance, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { ApiError } from "../../platform/http/errors.js";
import { refusedInEnvelope } from "../../platform/http/rate-limit.js";
import {
  type Authenticator,
  authenticate,
  cachedCaller,
  isRefusedCredential,
  refuseQueryCredentials,
} from "./authenticate.js";
import type { Permission } from "./permissions.js";
import type { Principal } from "./principal.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** No credential needed (login, health). */
    public?: boolean;
    /** Tied to a person: an API key gets 403 (as `GET /api/v1/me` does). */
    person?: boolean;
    /** Checked before the body is validated or anything is looked up; several: all of them. */
    permission?: Permission | readonly Permission[];
  }
  interface FastifyRequest {
    principal: Principal | null;
  }
}

function requirePermission(principal: Principal, permission: Permission): void {
  if (!principal.permissions.has(permission)) {
    throw ApiError.forbidden(`Missing permission '${permission}'`);
  }
}

const PERSON_ONLY =
  "This endpoint is tied to a person and refuses API keys; sign in with POST /api/v1/auth and send Bearer <token>";

/** Records the caller on the request, then refuses it (403) where the route wants more. */
function admit(auth: Authenticator, request: FastifyRequest, config: FastifyContextConfig, principal: Principal): void {
  request.principal = principal;
  if (principal.kind === "apiKey") auth.lastUsed.touch(principal.tokenId, request.ip, auth.clock.now());
  if (config.person && principal.kind !== "user") throw ApiError.forbidden(PERSON_ONLY);
  const wanted = config.permission;
  if (typeof wanted === "string") requirePermission(principal, wanted);
  else if (wanted) for (const permission of wanted) requirePermission(principal, permission);
}

/**
 * Authenticates every route of the scope it is registered in, in onRequest so that a bad
 * credential is a 401 before the body is read or validated, and a missing permission a 403
 * before any lookup.
 *
 * Callback style, so that the common case, a key or a signed-in person already cached, is
 * decided synchronously; anything else goes through `authenticate` and its promise. A throw
 * in a callback hook reaches the error handler just as a rejection does.
 */
export const authHook = fp<{ auth: Authenticator }>(
  async (app: FastifyInstance, { auth }) => {
    const { limits } = app;
    app.decorateRequest("principal", null);
    app.addHook("onRequest", (request, reply, done) => {
      refuseQueryCredentials(request.query);
      const config = request.routeOptions.config;
      if (config.public) {
        done();
        return;
      }
      // An address past its refused credentials is refused before anything is looked up (a
      // cached key included): trying keys costs the service nothing more.
      const overBudget = limits.credentialBudget(request.ip);
      if (overBudget !== null) {
        done(refusedInEnvelope(reply, overBudget, "refused credentials from this address"));
        return;
      }
      const header = request.headers.authorization;
      const cached = cachedCaller(auth, header);
      if (cached !== undefined) {
        admit(auth, request, config, cached);
        done();
        return;
      }
      authenticate(auth, header).then(
        (principal) => {
          let refusal: Error | undefined;
          try {
            admit(auth, request, config, principal);
          } catch (error) {
            refusal = error as Error;
          }
          done(refusal);
        },
        (error: unknown) => {
          const refusal = error instanceof Error ? error : new Error(String(error));
          if (isRefusedCredential(error, header)) void limits.credentialFailed(request.ip).finally(() => done(refusal));
          else done(refusal);
        },
      );
    });
  },
  { name: "auth-hook" },
);
