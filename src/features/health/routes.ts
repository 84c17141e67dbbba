import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { secretsEqual } from "../../platform/crypto.js";
import { Envelope, ErrorEnvelope } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import type { HealthReport } from "./report.js";

const StatusSchema = Type.Union([Type.Literal("healthy"), Type.Literal("degraded"), Type.Literal("unhealthy")]);
const ComponentStatus = Type.Object({ status: StatusSchema });
export const HealthSummary = Type.Object({
  status: StatusSchema,
  components: Type.Object({
    api: ComponentStatus,
    database: ComponentStatus,
    queue: ComponentStatus,
    search: ComponentStatus,
  }),
  checkedAt: Type.String({ format: "date-time" }),
});
const Detailed = Type.Object({
  ...HealthSummary.properties,
  checks: Type.Array(
    Type.Object({
      name: Type.String(),
      component: Type.String(),
      status: StatusSchema,
      durationMs: Type.Number(),
      error: Type.Union([Type.String(), Type.Null()]),
    }),
  ),
});

function envelopeOf<T extends HealthReport | Omit<HealthReport, "checks">>(report: T) {
  if (report.status === "unhealthy") {
    const down = Object.entries(report.components)
      .filter(([, c]) => c.status === "unhealthy")
      .map(([name]) => name);
    return { code: "service_unavailable", message: `Unhealthy: ${down.join(", ")}`, data: report };
  }
  return { code: "ok", message: report.status === "healthy" ? "Healthy" : "Degraded", data: report };
}

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type HealthRouteDeps = Pick<AppContext, "config">;

export function healthRoutes(ctx: HealthRouteDeps, report: () => Promise<HealthReport>): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/health",
      {
        schema: {
          tags: ["Health"],
          summary: "Service health: api, database, queue, search. 503 only when api or database is down",
          description: "No authentication. Cached for a few seconds. A queue or search problem is 'degraded' with 200.",
          security: [],
          response: { 200: Envelope(HealthSummary), 503: Envelope(HealthSummary) },
        },
      },
      async (_request, reply) => {
        const { checks: _checks, ...summary } = await report();
        return reply.status(summary.status === "unhealthy" ? 503 : 200).send(envelopeOf(summary));
      },
    );

    app.get(
      "/health/detailed",
      {
        schema: {
          tags: ["Health"],
          summary: "Every health check with its duration and error text",
          description: "Needs the X-Health-Key header; 404 when the deployment has no health key.",
          security: [],
          headers: Type.Object({ "x-health-key": Type.Optional(Type.String()) }),
          response: {
            200: Envelope(Detailed),
            503: Envelope(Detailed),
            401: ErrorEnvelope,
            404: ErrorEnvelope,
            429: ErrorEnvelope,
          },
        },
      },
      async (request, reply) => {
        const expected = ctx.config.healthKey;
        if (expected === undefined) throw new ApiError("not_found", "Route GET /api/health/detailed does not exist");
        // Wrong keys are counted per client IP; past the limit the address is refused (429), the
        // right key included, until the window ends: the key is short enough to be guessed.
        const countGuess = await app.limits.healthKeyGuesses(request, reply);
        const given = request.headers["x-health-key"];
        if (typeof given !== "string" || !secretsEqual(given, expected)) {
          // Only a guess counts: a missing or empty header could never succeed.
          if (typeof given === "string" && given !== "") await countGuess();
          throw ApiError.unauthorized("X-Health-Key header is missing or wrong");
        }
        const detailed = await report();
        return reply.status(detailed.status === "unhealthy" ? 503 : 200).send(envelopeOf(detailed));
      },
    );
  };
}
