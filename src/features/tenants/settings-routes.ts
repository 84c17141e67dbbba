import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { actorOf } from "../audit/index.js";
import { callerOf } from "../auth/index.js";
import { Tenant } from "./schemas.js";
import { getTenant, rotatePostbackKey } from "./service.js";

const Settings = Type.Object({
  ...Tenant.properties,
  postbackUrlTemplate: Type.String({
    description: "Where programs send conversions; {postbackKey} is the secret shown once when it is rotated",
  }),
});

const RotatedKey = Type.Object({
  postbackKey: Type.String({ description: "The new secret, shown in this answer only" }),
  postbackUrl: Type.String({ description: "The postback URL with the new key and example parameters" }),
});

/** /settings: the tenant's own settings, and rotation of its postback key. */
export function settingsRoutes(ctx: AppContext): FastifyPluginAsyncTypebox {
  const base = ctx.config.publicBaseUrl.replace(/\/+$/, "");
  const parameters = "clickId={clickId}&type=Deposit&value={value}&currency={currency}&externalId={transactionId}";
  return async (app) => {
    app.get(
      "/settings",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Settings"],
          summary: "The tenant's settings and its postback URL",
          response: { 200: Envelope(Settings), ...errorResponses },
        },
      },
      async (request) => {
        const tenant = await getTenant(ctx.db, callerOf(request).tenantId);
        if (!tenant) throw ApiError.notFound("Tenant", callerOf(request).tenantId);
        return ok({ ...tenant, postbackUrlTemplate: `${base}/postback/{postbackKey}?${parameters}` });
      },
    );

    app.post(
      "/settings/postback-key",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Settings"],
          summary: "Rotate the postback key: the old key stops working at once; the new one is shown only here",
          response: { 201: Envelope(RotatedKey), ...errorResponses },
        },
      },
      async (request, reply) => {
        const caller = callerOf(request);
        const postbackKey = await ctx.db.transaction((tx) =>
          rotatePostbackKey(tx, caller.tenantId, actorOf(caller), ctx.clock.now()),
        );
        return reply
          .status(201)
          .send(ok({ postbackKey, postbackUrl: `${base}/postback/${postbackKey}?${parameters}` }, "Rotated"));
      },
    );
  };
}
