import rateLimit from "@fastify/rate-limit";
import type { FastifyInstance } from "fastify";
import fp from "fastify-plugin";
import { Redis } from "ioredis";
import { ApiError } from "./errors.js";

export interface RateLimitOptions {
  /** Requests per window per API key or person. */
  max: number;
  /** Requests per window per client IP where no credential is given. */
  anonymousMax: number;
  windowMs: number;
}

/**
 * Per-caller request limits: keyed by API key or person once authenticated, by client IP
 * otherwise; shared across nodes through Redis when REDIS_URL is set. A 429 carries
 * Retry-After and the envelope.
 */
export function rateLimits(options: RateLimitOptions, redisUrl: string | undefined) {
  return fp(
    async (app: FastifyInstance) => {
      const redis =
        redisUrl === undefined ? undefined : new Redis(redisUrl, { connectTimeout: 2000, maxRetriesPerRequest: 1 });
      if (redis) app.addHook("onClose", async () => void (await redis.quit()));
      await app.register(rateLimit, {
        global: true,
        max: (_request, key) => (key.startsWith("ip:") ? options.anonymousMax : options.max),
        timeWindow: options.windowMs,
        // A route-level hook, so after the auth hook (the caller is known) but before the body
        // is parsed or validated: an invalid body counts like any other request.
        hook: "onRequest",
        // The x-ratelimit-* headers only on a 429 (beside Retry-After), not on every answer.
        addHeadersOnExceeding: {
          "x-ratelimit-limit": false,
          "x-ratelimit-remaining": false,
          "x-ratelimit-reset": false,
        },
        ...(redis ? { redis, nameSpace: "rl:" } : {}),
        keyGenerator: (request) => {
          const principal = request.principal;
          if (principal?.kind === "apiKey") return `key:${principal.tokenId}`;
          if (principal?.kind === "user") return `user:${principal.userId}`;
          return `ip:${request.ip}`;
        },
        errorResponseBuilder: (_request, context) =>
          new ApiError("rate_limited", `Too many requests: limit is ${context.max} per ${context.after}; retry later`),
      });
    },
    { name: "rate-limits" },
  );
}
