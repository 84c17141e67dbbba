import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { BuildInfo } from "../../platform/build-info.js";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { BuildInfoSchema } from "./active-version.js";
import type { HealthReport } from "./report.js";
import { HealthSummary } from "./routes.js";

const ServiceState = Type.Object({ health: HealthSummary, build: BuildInfoSchema });

/**
 * GET /service: the service's health (the /api/health summary) and its deployed build (as
 * /active-version), for account admins, so the dashboard reads them from /api/v1 as it reads
 * everything else. A tenant's admin sees only what the public endpoints already tell.
 */
export function serviceStateRoute(build: BuildInfo, report: () => Promise<HealthReport>): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/service",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Health"],
          summary: "The service's health and deployed build, for account admins",
          response: { 200: Envelope(ServiceState), ...errorResponses },
        },
      },
      async () => {
        const { checks: _checks, ...health } = await report();
        return ok({ health, build });
      },
    );
  };
}
