import rateLimit from "@fastify/rate-limit";
import type { FastifyBaseLogger, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { Redis } from "ioredis";
import type { WayInLimits } from "../../config.js";
import { addressKey, IpCounters } from "../ip-counters.js";
import { ApiError } from "./errors.js";

export interface RateLimitOptions extends WayInLimits {
  /** Requests per window per API key or person (/api/v1 and /mcp together). */
  max: number;
  /** Requests per window per client IP where no credential is given. */
  anonymousMax: number;
  /** The window of every per-minute limit (tests shorten it). */
  windowMs: number;
}

declare module "fastify" {
  interface FastifyInstance {
    /** Every request limit of the service, on one counter store (Redis when REDIS_URL is set). */
    limits: Limiter;
  }
}

interface Count {
  count: number;
  /** Milliseconds until the key's window ends. */
  ttlMs: number;
}

/** Fixed-window counters: a key's window starts at its first hit and lasts `windowMs`. */
interface CounterStore {
  hit(key: string, cost: number, windowMs: number): Promise<Count>;
  /** The count so far, without counting anything. */
  peek(key: string): Promise<Count>;
}

// Addresses whose refused credentials are counted at once; 16 bytes each, 1 MiB in all.
const CREDENTIAL_FAILURE_SLOTS = 65_536;

// Past this many live keys the memory store drops its oldest: a flood of distinct keys (forged
// postback keys, rotating addresses) must not grow the process without bound.
const MEMORY_MAX_KEYS = 100_000;

class MemoryCounters implements CounterStore {
  private readonly entries = new Map<string, { count: number; resetAt: number }>();

  async hit(key: string, cost: number, windowMs: number): Promise<Count> {
    const now = Date.now();
    let entry = this.entries.get(key);
    if (!entry || entry.resetAt <= now) {
      this.entries.delete(key);
      if (this.entries.size >= MEMORY_MAX_KEYS) this.evict(now);
      entry = { count: 0, resetAt: now + windowMs };
      this.entries.set(key, entry);
    }
    entry.count += cost;
    return { count: entry.count, ttlMs: entry.resetAt - now };
  }

  async peek(key: string): Promise<Count> {
    const now = Date.now();
    const entry = this.entries.get(key);
    if (!entry || entry.resetAt <= now) return { count: 0, ttlMs: 0 };
    return { count: entry.count, ttlMs: entry.resetAt - now };
  }

  /** Drops expired windows, then (if still full) the oldest tenth: Map keeps insertion order. */
  private evict(now: number): void {
    for (const [key, entry] of this.entries) if (entry.resetAt <= now) this.entries.delete(key);
    if (this.entries.size < MEMORY_MAX_KEYS) return;
    let drop = Math.ceil(MEMORY_MAX_KEYS / 10);
    for (const key of this.entries.keys()) {
      if (drop-- <= 0) break;
      this.entries.delete(key);
    }
  }
}

// One round trip, atomic: count, and start the window's expiry on its first hit.
const HIT_SCRIPT = `
local count = redis.call('INCRBY', KEYS[1], ARGV[1])
local ttl = redis.call('PTTL', KEYS[1])
if ttl < 0 then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  ttl = tonumber(ARGV[2])
end
return {count, ttl}`;

class RedisCounters implements CounterStore {
  constructor(private readonly redis: Redis) {}

  async hit(key: string, cost: number, windowMs: number): Promise<Count> {
    const [count, ttl] = (await this.redis.eval(HIT_SCRIPT, 1, key, cost, windowMs)) as [number, number];
    return { count, ttlMs: ttl };
  }

  async peek(key: string): Promise<Count> {
    const [count, ttl] = await Promise.all([this.redis.get(key), this.redis.pttl(key)]);
    return count === null ? { count: 0, ttlMs: 0 } : { count: Number(count), ttlMs: Math.max(ttl, 0) };
  }
}

export interface Verdict {
  allowed: boolean;
  max: number;
  windowMs: number;
  /** Seconds until the window ends (the Retry-After of a refusal), at least 1. */
  retryAfterS: number;
}

/** "1 minute", "15 minutes", "1 second": the window as a 429 message names it. */
function windowText(windowMs: number): string {
  const [amount, unit] =
    windowMs % 60_000 === 0 ? [windowMs / 60_000, "minute"] : [Math.max(1, Math.round(windowMs / 1000)), "second"];
  return `${amount} ${unit}${amount === 1 ? "" : "s"}`;
}

/** The limit of a refused request, as its message says it: `limit is 10 per 1 minute`. */
export function limitText(verdict: Verdict): string {
  return `limit is ${verdict.max} per ${windowText(verdict.windowMs)}`;
}

/**
 * The service's request limits, shared by every way in: one counter store for the process
 * (Redis when REDIS_URL is set, so every node counts together), keys namespaced per limit.
 * A counter that cannot be reached lets the request through and logs: a Redis outage must
 * not drop postbacks or lock everyone out (the /api/v1 limit keeps @fastify/rate-limit's
 * behaviour, an error).
 */
export class Limiter {
  /**
   * Refused credentials per client IP on every way in (/api/v1, /mcp, postback keys): a table of
   * fixed size in this node's memory, read without a promise before any credential is looked
   * up. With Redis each failure is counted there too and its shared count brought back here.
   */
  readonly credentialFailures = new IpCounters(CREDENTIAL_FAILURE_SLOTS);

  constructor(
    readonly store: CounterStore,
    readonly options: RateLimitOptions,
    private readonly log: FastifyBaseLogger,
  ) {}

  /**
   * The refusal of an address over its budget of refused credentials (AUTH_FAILURES_PER_IP_PER_MINUTE),
   * or null: decided from memory, before the credential is looked at, the right one included.
   */
  credentialBudget(ip: string): Verdict | null {
    const { authFailuresPerIpPerMinute: max, windowMs } = this.options;
    const now = Date.now();
    const slot = this.credentialFailures.find(ip, now);
    if (slot < 0 || this.credentialFailures.countAt(slot) < max) return null;
    return verdict(false, max, windowMs, this.credentialFailures.endAt(slot) - now);
  }

  /**
   * Counts one refused credential from `ip` (here, and in Redis when it is the store); resolves
   * once the shared count is known here, so the refusal is answered after it (a failure's cost).
   */
  async credentialFailed(ip: string): Promise<void> {
    const { windowMs } = this.options;
    this.credentialFailures.hit(ip, Date.now(), windowMs);
    if (!(this.store instanceof RedisCounters)) return;
    // Every node's failures together: the shared count is brought into this node's table.
    try {
      const shared = await this.store.hit(`auth-fail:ip:${addressKey(ip)}`, 1, windowMs);
      const at = Date.now();
      this.credentialFailures.raise(ip, shared.count, at, at + shared.ttlMs);
    } catch (error) {
      this.log.error({ err: error, limit: "auth-fail" }, "rate limit store unavailable; counted on this node only");
    }
  }

  /** Counts `cost` requests against `key`; refused once the window's count is over `max`. */
  async take(key: string, max: number, windowMs: number, cost = 1): Promise<Verdict> {
    try {
      const { count, ttlMs } = await this.store.hit(key, cost, windowMs);
      return verdict(count <= max, max, windowMs, ttlMs);
    } catch (error) {
      this.log.error({ err: error, limit: key.split(":")[0] }, "rate limit store unavailable; request let through");
      return verdict(true, max, windowMs, 0);
    }
  }

  /** A failure budget: refused once `key` has failed `max` times in its window (checked before the attempt). */
  async check(key: string, max: number, windowMs: number): Promise<Verdict> {
    try {
      const { count, ttlMs } = await this.store.peek(key);
      return verdict(count < max, max, windowMs, ttlMs);
    } catch (error) {
      this.log.error({ err: error, limit: key.split(":")[0] }, "rate limit store unavailable; request let through");
      return verdict(true, max, windowMs, 0);
    }
  }

  /** Counts one failure against `key` (a wrong password, a wrong admin or health key). */
  async fail(key: string, windowMs: number): Promise<void> {
    await this.take(key, Number.MAX_SAFE_INTEGER, windowMs);
  }

  /**
   * Wrong health keys from one address, wherever the health key is accepted (the detailed health
   * and, without a metrics key of its own, /metrics): one budget, so no route is a way around it.
   * Throws the 429 past the limit, the right key included; returns what counts one wrong guess.
   */
  async healthKeyGuesses(request: FastifyRequest, reply: FastifyReply): Promise<() => Promise<void>> {
    const { healthKeyFailuresPerMinute, windowMs } = this.options;
    const failures = `health-fail:ip:${request.ip}`;
    const budget = await this.check(failures, healthKeyFailuresPerMinute, windowMs);
    if (!budget.allowed) throw refusedInEnvelope(reply, budget, "wrong health keys from this address");
    return () => this.fail(failures, windowMs);
  }

  /**
   * A request a person sends outward by hand (a webhook's simulation, an integration's test):
   * SIMULATE_PER_WEBHOOK_PER_MINUTE per `key` (one integration), outside the webhook allowance.
   * Throws the 429 naming `what` past it.
   */
  async takeTrialSend(reply: FastifyReply, key: string, what: string): Promise<void> {
    const { simulatePerWebhookPerMinute, windowMs } = this.options;
    const budget = await this.take(key, simulatePerWebhookPerMinute, windowMs);
    if (!budget.allowed) throw refusedInEnvelope(reply, budget, what);
  }

  /** An API key's budget, shared by /api/v1 and /mcp (same counter as the /api/v1 plugin). */
  takeApiKey(tokenId: string, cost: number): Promise<Verdict> {
    return this.take(`rl:key:${tokenId}`, this.options.max, this.options.windowMs, cost);
  }
}

function verdict(allowed: boolean, max: number, windowMs: number, ttlMs: number): Verdict {
  return { allowed, max, windowMs, retryAfterS: Math.max(1, Math.ceil(ttlMs / 1000)) };
}

/** A refusal in the envelope: sets Retry-After and returns the 429 to throw. */
export function refusedInEnvelope(reply: FastifyReply, refused: Verdict, what = "requests"): ApiError {
  reply.header("retry-after", refused.retryAfterS);
  return new ApiError("rate_limited", `Too many ${what}: ${limitText(refused)}; retry later`);
}

/**
 * The process's counters, decorated as `app.limits` at the root so every way in (the API, MCP,
 * tracking, admin, health) counts in one store.
 */
export function limiter(options: RateLimitOptions, redisUrl: string | undefined) {
  return fp(
    async (app: FastifyInstance) => {
      let store: CounterStore = new MemoryCounters();
      if (redisUrl !== undefined) {
        const redis = new Redis(redisUrl, { connectTimeout: 2000, maxRetriesPerRequest: 1 });
        app.addHook("onClose", async () => void (await redis.quit()));
        store = new RedisCounters(redis);
      }
      app.decorate("limits", new Limiter(store, options, app.log));
    },
    { name: "limits" },
  );
}

/**
 * Per-caller request limits on /api/v1: keyed by API key or person once authenticated, by
 * client IP otherwise, on the counters of `limiter` (so /mcp spends the same key budget).
 * A 429 carries Retry-After and the envelope.
 */
export const rateLimits = fp(
  async (app: FastifyInstance) => {
    const { store, options } = app.limits;
    // The plugin's store contract (callbacks); every key lives under `rl:` as before.
    class SharedStore {
      incr(
        key: string,
        done: (error: Error | null, result?: { current: number; ttl: number }) => void,
        windowMs: number,
      ) {
        store.hit(`rl:${key}`, 1, windowMs).then(
          ({ count, ttlMs }) => done(null, { current: count, ttl: ttlMs }),
          (error: Error) => done(error),
        );
      }
      child() {
        return this;
      }
    }
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
      store: SharedStore,
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
  { name: "rate-limits", dependencies: ["limits"] },
);
