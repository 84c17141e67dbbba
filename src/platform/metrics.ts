import Fastify, { type FastifyInstance, type FastifyReply, type FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { Counter, collectDefaultMetrics, Histogram, Registry } from "prom-client";
import { secretsEqual } from "./crypto.js";
import { ApiError } from "./http/errors.js";

/**
 * Who may read /metrics (it names every route, its traffic and the process's memory):
 * - `port` set (METRICS_PORT): only a separate listener serves it; the main port has no /metrics.
 * - `key` set (METRICS_KEY): `Authorization: Bearer <key>` is required, on whichever port serves it.
 * - otherwise, on the main port, the health key (HEALTH_KEY) stands in, as `Authorization:
 *   Bearer <key>` or `X-Health-Key`; with no key at all /metrics is off (404), as the detailed
 *   health is.
 */
export interface MetricsAccess {
  port: number | undefined;
  key: string | undefined;
  healthKey: string | undefined;
}

const registries = new WeakMap<FastifyInstance, Registry>();

function bearerOf(request: FastifyRequest): string | undefined {
  const header = request.headers.authorization;
  if (header === undefined) return undefined;
  const space = header.indexOf(" ");
  if (space < 0 || header.slice(0, space).toLowerCase() !== "bearer") return undefined;
  return header.slice(space + 1).trim();
}

/** True when the request carries the credential; the message never repeats what was sent. */
function admitted(request: FastifyRequest, key: string, healthKeyHeader: boolean): boolean {
  const bearer = bearerOf(request);
  if (bearer !== undefined && secretsEqual(bearer, key)) return true;
  const given = request.headers["x-health-key"];
  return healthKeyHeader && typeof given === "string" && secretsEqual(given, key);
}

async function answer(registry: Registry, reply: FastifyReply): Promise<string> {
  reply.type(registry.contentType);
  return registry.metrics();
}

/** Prometheus metrics at /metrics: request counts and latencies by route template and status. */
export const metrics = fp<MetricsAccess>(
  async (app: FastifyInstance, access) => {
    const registry = new Registry();
    registries.set(app, registry);
    collectDefaultMetrics({ register: registry });
    const requests = new Counter({
      name: "http_requests_total",
      help: "HTTP requests answered, by method, route template and status",
      labelNames: ["method", "route", "status"] as const,
      registers: [registry],
    });
    const duration = new Histogram({
      name: "http_request_duration_seconds",
      help: "HTTP request latency, by method, route template and status",
      labelNames: ["method", "route", "status"] as const,
      buckets: [0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5],
      registers: [registry],
    });

    // Labelled children are looked up once per method, route and status, not hashed per request.
    const children = new Map<
      string,
      {
        count: Counter.Internal;
        time: Histogram.Internal<"method" | "route" | "status">;
      }
    >();
    app.addHook("onResponse", (request, reply, done) => {
      // The template, never the raw URL, so ids and keys do not explode label cardinality.
      const route = request.routeOptions.url ?? "unmatched";
      const key = `${request.method} ${reply.statusCode} ${route}`;
      let child = children.get(key);
      if (!child) {
        const labels = { method: request.method, route, status: String(reply.statusCode) };
        child = { count: requests.labels(labels), time: duration.labels(labels) };
        children.set(key, child);
      }
      child.count.inc();
      child.time.observe(reply.elapsedTime / 1000);
      done();
    });

    // A separate listener serves it instead; no key at all leaves it off (see MetricsAccess).
    const key = access.key ?? access.healthKey;
    if (access.port !== undefined || key === undefined) return;
    const healthKeyHeader = access.key === undefined;
    app.get("/metrics", { schema: { hide: true } }, async (request, reply) => {
      // Accepting the health key here makes this a second place to guess it: the same budget.
      const countGuess = healthKeyHeader ? await app.limits.healthKeyGuesses(request, reply) : undefined;
      if (!admitted(request, key, healthKeyHeader)) {
        if (countGuess && (bearerOf(request) || request.headers["x-health-key"])) await countGuess();
        throw ApiError.unauthorized(
          healthKeyHeader
            ? "Metrics need the health key: send 'Authorization: Bearer <HEALTH_KEY>' or X-Health-Key"
            : "Metrics need 'Authorization: Bearer <METRICS_KEY>'",
        );
      }
      return answer(registry, reply);
    });
  },
  { name: "metrics" },
);

/**
 * The separate /metrics listener (METRICS_PORT), serving the registry of `app`: a port the
 * operator keeps off the public network. METRICS_KEY, when set, is required here too.
 */
export async function listenMetrics(
  app: FastifyInstance,
  access: MetricsAccess & { port: number },
  host: string,
): Promise<FastifyInstance> {
  const registry = registries.get(app);
  if (!registry) throw new Error("the metrics plugin is not registered on this app");
  const server = Fastify({ loggerInstance: app.log, disableRequestLogging: true });
  server.get("/metrics", async (request, reply) => {
    if (access.key !== undefined && !admitted(request, access.key, false)) {
      return reply
        .status(401)
        .type("text/plain; charset=utf-8")
        .send("Metrics need 'Authorization: Bearer <METRICS_KEY>'");
    }
    return answer(registry, reply);
  });
  await server.listen({ port: access.port, host });
  return server;
}

/** The registry /metrics serves for `app`, for features that add their own metrics. */
export function metricsRegistry(app: FastifyInstance): Registry | undefined {
  return registries.get(app);
}
