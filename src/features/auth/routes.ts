import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { FastifyReply } from "fastify";
import type { AppContext } from "../../context.js";
import { hashPassword, randomSecret, sha256Hex, verifyPassword } from "../../platform/crypto.js";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { type Limiter, refusedInEnvelope } from "../../platform/http/rate-limit.js";
import { recordAudit } from "../audit/index.js";
import { findLogin, rehashPasswordIfOutdated } from "../tenants/index.js";
import { personOf } from "./caller.js";
import { LoginBody, LoginResult, Me, SignedOut } from "./schemas.js";

// Checked when the email is unknown, so a miss costs as long as a wrong password.
let dummyHash: Promise<string> | undefined;
function unknownUserHash(): Promise<string> {
  dummyHash ??= hashPassword(randomSecret());
  return dummyHash;
}

/**
 * Failed sign-ins are counted per account (the email, hashed: no address reaches the counter
 * store) and per client IP. Past either limit the attempt is refused (429) before any password
 * is checked, the right one included, until the window ends: guessing gains nothing by going on.
 */
async function loginFailureBudget(limits: Limiter, ip: string, email: string, reply: FastifyReply) {
  const { loginFailuresPerAccount, loginFailuresPerIp, loginFailureWindowMs: windowMs } = limits.options;
  const account = `login-fail:account:${sha256Hex(email.trim().toLowerCase())}`;
  const address = `login-fail:ip:${ip}`;
  const [byAccount, byAddress] = await Promise.all([
    limits.check(account, loginFailuresPerAccount, windowMs),
    limits.check(address, loginFailuresPerIp, windowMs),
  ]);
  if (!byAccount.allowed) throw refusedInEnvelope(reply, byAccount, "failed sign-ins for this account");
  if (!byAddress.allowed) throw refusedInEnvelope(reply, byAddress, "failed sign-ins from this address");
  return { count: () => Promise.all([limits.fail(account, windowMs), limits.fail(address, windowMs)]) };
}

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type AuthRouteDeps = Pick<AppContext, "db" | "clock" | "jwt" | "people">;

/** The token of a `Bearer` header (the auth hook has already verified it). */
function bearerToken(header: string | undefined): string {
  const match = /^bearer\s+(\S+)\s*$/i.exec(header ?? "");
  if (!match?.[1]) throw ApiError.unauthorized("Sign-out needs the Authorization header 'Bearer <token>'");
  return match[1];
}

export function authRoutes(ctx: AuthRouteDeps): FastifyPluginAsyncTypebox {
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
      async (request, reply) => {
        const failures = await loginFailureBudget(app.limits, request.ip, request.body.email, reply);
        const login = await findLogin(ctx.db, request.body.email);
        const valid = await verifyPassword(request.body.password, login?.passwordHash ?? (await unknownUserHash()));
        if (!login || !valid || login.disabled) {
          await failures.count();
          throw ApiError.unauthorized("Email or password is wrong");
        }
        // A hash made with older parameters is upgraded while the password is at hand; a failure keeps the old one.
        await rehashPasswordIfOutdated(ctx.db, login, request.body.password).catch((error: unknown) => {
          request.log.warn({ err: error }, "password rehash failed; the old hash stays");
        });
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

    app.delete(
      "/auth",
      {
        config: { person: true, anyCaller: true },
        schema: {
          tags: ["Auth"],
          summary:
            "Sign out: the bearer token of this request stops working at once on every node; refuses API keys (403)",
          response: { 200: Envelope(SignedOut), ...errorResponses },
        },
      },
      async (request) => {
        const me = personOf(request);
        const token = bearerToken(request.headers.authorization);
        const session = await ctx.people.verify(token);
        if (session === null) throw ApiError.unauthorized("Bearer token is invalid or expired");
        const now = ctx.clock.now();
        await ctx.people.revoke(
          token,
          session,
          (work) =>
            ctx.db.transaction(async (tx) => {
              await work(tx);
              await recordAudit(tx, {
                tenantId: me.tenantId,
                actor: { type: "user", id: me.userId, name: me.email },
                action: "auth.logout",
                subject: { type: "user", id: me.userId },
                requestId: request.id,
                at: now,
              });
            }),
          now,
        );
        return ok({ signedOut: true as const }, "Signed out");
      },
    );

    app.get(
      "/me",
      {
        config: { person: true, anyCaller: true },
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
