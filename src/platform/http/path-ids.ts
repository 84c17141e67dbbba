import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { Type } from "typebox";
import { ApiError } from "./errors.js";

declare module "fastify" {
  interface FastifyContextConfig {
    /** Answers any path id itself (a DELETE that never errors on an unknown id): no guard. */
    anyPathId?: boolean;
  }
}

// Longer than any id the service makes: prefixed ids are about 30 characters, catalog ids 16 digits.
const MAX_ID_LENGTH = 100;

/** Whether a path parameter could name a stored row: not longer than any id, no NUL (PostgreSQL refuses it in text). */
export function couldBeId(value: string): boolean {
  return value.length <= MAX_ID_LENGTH && !value.includes("\u0000");
}

/**
 * A prefixed id in a path, as a plain string: a malformed id is simply an id that does not exist
 * (404; docs/api-conventions.md), found so by the lookup, after the caller's credential (401) and permission (403).
 */
export function PathId(what: string) {
  return Type.Object({ id: Type.String({ description: `The ${what}'s id` }) });
}

/**
 * In the scope it is registered in, a path parameter no id can be (`couldBeId`) is a 404 before the
 * route validates or looks it up: after the credential and permission checks (onRequest), before
 * the body is validated. A route with `anyPathId` answers such ids itself.
 */
export const pathIdGuard = fp(
  async (app: FastifyInstance) => {
    app.addHook("preValidation", (request, _reply, done) => {
      if (request.routeOptions.config.anyPathId) return done();
      const params = request.params as Record<string, unknown> | undefined;
      for (const [name, value] of Object.entries(params ?? {})) {
        if (typeof value === "string" && !couldBeId(value)) return done(ApiError.notFound(`The ${name}`, value));
      }
      done();
    });
  },
  { name: "path-id-guard" },
);
