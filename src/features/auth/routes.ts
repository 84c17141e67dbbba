import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../../context.js";
import { hashPassword, randomSecret, verifyPassword } from "../../platform/crypto.js";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { recordAudit } from "../audit/index.js";
import { findLogin } from "../tenants/index.js";
import { personOf } from "./hook.js";
import { LoginBody, LoginResult, Me } from "./schemas.js";

// Checked when the email is unknown, so a miss costs as long as a wrong password.
let dummyHash: Promise<string> | undefined;
function unknownUserHash(): Promise<string> {
  dummyHash ??= hashPassword(randomSecret());
  return dummyHash;
}

export function authRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.post(
      "/auth",
      {
        config: { public: true },
        schema: {
          tags: ["Auth"],
          summary: "Sign in with email and password; returns a bearer JWT",
          security: [],
          body: LoginBody,
          response: { 200: Envelope(LoginResult), ...errorResponses },
        },
      },
      async (request) => {
        const login = await findLogin(ctx.db, request.body.email);
        const valid = await verifyPassword(request.body.password, login?.passwordHash ?? (await unknownUserHash()));
        if (!login || !valid || login.disabled) throw ApiError.unauthorized("Email or password is wrong");
        const now = ctx.clock.now();
        const { token, expiresAt } = await ctx.jwt.sign({ userId: login.id, tenantId: login.tenantId }, now);
        await recordAudit(ctx.db, {
          tenantId: login.tenantId,
          actor: { type: "user", id: login.id, name: request.body.email },
          action: "auth.login",
          subject: { type: "user", id: login.id },
          requestId: request.id,
          at: now,
        });
        return ok({ token, tokenType: "Bearer" as const, expiresAt: expiresAt.toISOString() });
      },
    );

    app.get(
      "/me",
      {
        config: { person: true },
        schema: {
          tags: ["Auth"],
          summary: "The signed-in person; refuses API keys (403)",
          response: { 200: Envelope(Me), ...errorResponses },
        },
      },
      async (request) => {
        const me = personOf(request);
        return ok({
          id: me.userId,
          email: me.email,
          name: me.name,
          tenantId: me.tenantId,
          permissions: [...me.permissions].sort(),
        });
      },
    );
  };
}
