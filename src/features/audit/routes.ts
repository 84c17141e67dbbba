import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { DateParam, parseDateRange } from "../../platform/http/dates.js";
import { Envelope, errorResponses, ok, PagedEnvelope, PageQuery, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { PathId } from "../../platform/http/path-ids.js";
import { callerOf } from "../auth/index.js";
import { getAudit, listAudit } from "./service.js";

const AuditRecord = Type.Object({
  id: Type.String(),
  actor: Type.Object({
    type: Type.String({ description: "user, api_key, admin or system" }),
    id: Type.Union([Type.String(), Type.Null()]),
    name: Type.String({ description: "The person's name, or the API key's name" }),
  }),
  action: Type.String(),
  subject: Type.Union([Type.Object({ type: Type.String(), id: Type.String() }), Type.Null()]),
  details: Type.Record(Type.String(), Type.Unknown()),
  requestId: Type.Union([Type.String(), Type.Null()]),
  at: Type.String({ format: "date-time" }),
});

const AuditQuery = Type.Object({
  ...PageQuery.properties,
  action: Type.Optional(Type.String({ maxLength: 100 })),
  actorId: Type.Optional(Type.String({ maxLength: 100 })),
  dateFrom: Type.Optional(DateParam),
  dateTo: Type.Optional(DateParam),
});

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type AuditRouteDeps = Pick<AppContext, "db">;

export function auditRoutes(ctx: AuditRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/audit-log",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Audit log"],
          summary: "What was done on the tenant, newest first",
          querystring: AuditQuery,
          response: { 200: PagedEnvelope(AuditRecord), ...errorResponses },
        },
      },
      async (request) => {
        const { dateFrom, dateTo, ...rest } = request.query;
        const range = parseDateRange(["dateFrom", "dateTo"], dateFrom, dateTo);
        const { items, total } = await listAudit(ctx.db, callerOf(request).tenantId, {
          ...rest,
          dateFrom: range.from,
          dateTo: range.to,
        });
        return paged(items, request.query, total);
      },
    );

    app.get(
      "/audit-log/:id",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Audit log"],
          summary: "One audit entry",
          params: PathId("audit entry"),
          response: { 200: Envelope(AuditRecord), ...errorResponses },
        },
      },
      async (request) => {
        const { id } = request.params;
        const entry = await getAudit(ctx.db, callerOf(request).tenantId, id);
        if (!entry) throw ApiError.notFound("Audit entry", id);
        return ok(entry);
      },
    );
  };
}
