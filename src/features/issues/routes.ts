import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { Envelope, errorResponses, ok, PagedEnvelope, PageQuery, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { PathId } from "../../platform/http/path-ids.js";
import { callerOf } from "../auth/index.js";
import { closeIssueByHand, getIssue, ISSUE_KINDS, listIssues } from "./service.js";

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
  closedReason: Type.Union([Type.String(), Type.Null()], {
    description: "The reason given by the person who closed it by hand; null when open or closed automatically",
  }),
});

const CloseBody = Type.Object(
  { reason: Type.String({ minLength: 1, maxLength: 500, description: "Why it is closed, kept with the issue" }) },
  { additionalProperties: false },
);

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type IssueRouteDeps = Pick<AppContext, "db" | "clock">;

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

    app.post(
      "/issues/:id/close",
      {
        // Most issues are about webhooks: closing one takes the permission that changes them
        // (account.admin implies it).
        config: { permission: "webhooks.update" },
        schema: {
          tags: ["Issues"],
          summary: "Close an open issue by hand with a reason; it reopens if its cause is raised again",
          params: PathId("issue"),
          body: CloseBody,
          response: { 200: Envelope(IssueSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { id } = request.params;
        const reason = request.body.reason.trim();
        if (reason === "") throw ApiError.validation("reason", "must not be blank");
        const tenantId = callerOf(request).tenantId;
        const now = ctx.clock.now();
        const result = await ctx.db.transaction((tx) => closeIssueByHand(tx, tenantId, id, reason, now));
        if (result === "missing") throw ApiError.notFound("Issue", id);
        if (result === "closed") throw ApiError.conflict(`Issue '${id}' is already closed`);
        return ok(result);
      },
    );
  };
}
