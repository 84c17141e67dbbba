import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { BuildInfo } from "../../platform/build-info.js";

export const BuildInfoSchema = Type.Object({
  version: Type.String(),
  buildNumber: Type.String(),
  buildTime: Type.String(),
  commitSha: Type.String(),
});

/** GET /active-version: the deployed build, plain JSON, no auth, not in the OpenAPI document. */
export function activeVersionRoute(build: BuildInfo): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get("/active-version", { schema: { hide: true, response: { 200: BuildInfoSchema } } }, async () => build);
  };
}
