import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { conflictResponses, Envelope, errorResponses, ok, PagedEnvelope, paged } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { PathId } from "../../platform/http/path-ids.js";
import { callerOf, type Principal } from "../auth/index.js";
import { NewSavedReportBody, SavedReportListQuery, SavedReportPatchBody, SavedReportSchema } from "./schemas.js";
import {
  createSavedReport,
  deleteSavedReport,
  getSavedReport,
  listSavedReports,
  type SavedReportEditor,
  updateSavedReport,
} from "./service.js";

const SavedReportId = PathId("saved report");
const TAGS = ["Saved reports"];

export type SavedReportRouteDeps = Pick<AppContext, "db" | "clock">;

function editorOf(caller: Principal): SavedReportEditor {
  const actor =
    caller.kind === "apiKey"
      ? ({ type: "api_key", id: caller.tokenId, name: caller.name } as const)
      : ({ type: "user", id: caller.userId, name: caller.name } as const);
  return { actor, isAdmin: caller.permissions.has("account.admin") };
}

/**
 * /saved-reports: whoever reads reports may list, open and save them (reports.read); changing or
 * deleting one someone else saved also needs account.admin (403), so people keep their own.
 */
export function savedReportRoutes(ctx: SavedReportRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    const config = { permission: "reports.read" } as const;

    app.get(
      "/saved-reports",
      {
        config,
        schema: {
          tags: TAGS,
          summary: "The tenant's saved reports, by name",
          querystring: SavedReportListQuery,
          response: { 200: PagedEnvelope(SavedReportSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { items, total } = await listSavedReports(ctx.db, callerOf(request).tenantId, request.query);
        return paged(items, request.query, total);
      },
    );

    app.post(
      "/saved-reports",
      {
        config,
        schema: {
          tags: TAGS,
          summary: "Save a report's parameters under a name",
          description:
            "409 when the name is taken (regardless of case) or the tenant holds the most saved reports allowed.",
          body: NewSavedReportBody,
          response: { 201: Envelope(SavedReportSchema), ...conflictResponses },
        },
      },
      async (request, reply) => {
        const caller = callerOf(request);
        const saved = await ctx.db.transaction((tx) =>
          createSavedReport(tx, caller.tenantId, request.body, editorOf(caller).actor, ctx.clock.now()),
        );
        return reply.status(201).send(ok(saved, "Created"));
      },
    );

    app.get(
      "/saved-reports/:id",
      {
        config,
        schema: {
          tags: TAGS,
          summary: "One saved report",
          params: SavedReportId,
          response: { 200: Envelope(SavedReportSchema), ...errorResponses },
        },
      },
      async (request) => {
        const { id } = request.params;
        const saved = await getSavedReport(ctx.db, callerOf(request).tenantId, id);
        if (!saved) throw ApiError.notFound("Saved report", id);
        return ok(saved);
      },
    );

    app.patch(
      "/saved-reports/:id",
      {
        config,
        schema: {
          tags: TAGS,
          summary: "Rename a saved report or replace its parameters",
          description: "Another person's saved report needs account.admin (403). 409 when the new name is taken.",
          params: SavedReportId,
          body: SavedReportPatchBody,
          response: { 200: Envelope(SavedReportSchema), ...conflictResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const saved = await ctx.db.transaction((tx) =>
          updateSavedReport(tx, caller.tenantId, request.params.id, request.body, editorOf(caller), ctx.clock.now()),
        );
        return ok(saved, "Updated");
      },
    );

    app.delete(
      "/saved-reports/:id",
      {
        config,
        schema: {
          tags: TAGS,
          summary: "Delete a saved report",
          description: "Another person's saved report needs account.admin (403).",
          params: SavedReportId,
          response: { 200: Envelope(Type.Object({ id: Type.String(), deleted: Type.Boolean() })), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const { id } = request.params;
        await ctx.db.transaction((tx) => deleteSavedReport(tx, caller.tenantId, id, editorOf(caller), ctx.clock.now()));
        return ok({ id, deleted: true }, "Deleted");
      },
    );
  };
}
