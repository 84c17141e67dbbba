import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { Envelope, errorResponses, ok, PagedEnvelope, PageQuery, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { PathId } from "../../platform/http/path-ids.js";
import { callerOf } from "../auth/index.js";
import { getIssue, ISSUE_KINDS, listIssues } from "./service.js";

const Kind = Type.Enum(ISSUE_KINDS);
const IssueSchema = Type.Object({
  id: Type.String(),
  kind: Kind,
  severity: Type.Union([Type.Literal("warning"), Type.Literal("error"), Type.Literal("critical")]),
  status: Type.Union([Type.Literal("open"), Type.Literal("closed")]),
  title: Type.String(),
  subject: Type.Object({ type: Type.String(), id: Type.String(), name: Type.String() }),
  details: Type.Record(Type.String(), Type.Unknown()),
  openedAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
  closedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
});

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type IssueRouteDeps = Pick<AppContext, "db">;

export function issueRoutes(ctx: IssueRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/issues",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Issues"],
          summary: "Issues raised on the tenant (key expiry, webhook failures, ...), most recently changed first",
          querystring: Type.Object({
            ...PageQuery.properties,
            status: Type.Optional(Type.Union([Type.Literal("open"), Type.Literal("closed")])),
            kind: Type.Optional(Kind),
          }),
          response: { 200: PagedEnvelope(IssueSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { items, total } = await listIssues(ctx.db, callerOf(request).tenantId, request.query);
        return paged(items, request.query, total);
      },
    );

    app.get(
      "/issues/:id",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Issues"],
          summary: "One issue",
          params: PathId("issue"),
          response: { 200: Envelope(IssueSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { id } = request.params;
        const issue = await getIssue(ctx.db, callerOf(request).tenantId, id);
        if (!issue) throw ApiError.notFound("Issue", id);
        return ok(issue);
      },
    );
  };
}
