import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import type { AppContext } from "../../context.js";
import type { Queryable } from "../../platform/db/index.js";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { callerOf } from "../auth/index.js";
import { GeneratedLink, LinkGeneratorParams, LinkGeneratorQuery } from "./schemas.js";
import { readTrackerValue, TrackerValueError } from "./tracker-value.js";

interface Tracker {
  id: number | null;
  name: string;
  isNew: boolean;
}

/** A tracker value checked against the tenant: known names become ids, new names stay names. */
async function resolveTracker(db: Queryable, tenantId: string, raw: string): Promise<Tracker> {
  let value: ReturnType<typeof readTrackerValue>;
  try {
    value = readTrackerValue(raw);
  } catch (error) {
    if (error instanceof TrackerValueError)
      throw ApiError.validation("tracker", error.message.replace(/^tracker /, ""));
    throw error;
  }
  if (value.kind === "id") {
    const [row] = await db.query<{ name: string }>("select name from trackers where tenant_id = $1 and id = $2", [
      tenantId,
      value.id,
    ]);
    // Another tenant's tracker is refused exactly like one that does not exist.
    if (!row) throw ApiError.validation("tracker", `id ${value.id} does not exist`);
    return { id: value.id, name: row.name, isNew: false };
  }
  const [row] = await db.query<{ id: string; name: string }>(
    "select id, name from trackers where tenant_id = $1 and lower(name) = lower($2)",
    [tenantId, value.name],
  );
  if (row) return { id: Number(row.id), name: row.name, isNew: false };
  // A new name is stored by the first click as the database lower-cases it (click-writer.ts),
  // and the generated URL carries it lower-cased: answer that name, not the one typed. The
  // database decides, as JavaScript's lower case can differ (U+0130 becomes two characters).
  const [stored] = await db.query<{ name: string }>("select lower($1) as name", [value.name]);
  return { id: null, name: stored?.name ?? value.name.toLowerCase(), isNew: true };
}

async function requireLink(db: Queryable, tenantId: string, id: number): Promise<void> {
  const [row] = await db.query("select 1 from links where tenant_id = $1 and id = $2", [tenantId, id]);
  if (!row) throw ApiError.notFound("Brand link", id);
}

interface SourceClickId {
  param: string | null;
  macro: string | null;
}

async function requireSource(db: Queryable, tenantId: string, id: number): Promise<SourceClickId> {
  const [row] = await db.query<{ click_id_param: string | null; click_id_macro: string | null }>(
    "select click_id_param, click_id_macro from traffic_sources where tenant_id = $1 and id = $2",
    [tenantId, id],
  );
  if (!row) throw ApiError.notFound("Traffic source", id);
  return { param: row.click_id_param, macro: row.click_id_macro };
}

/**
 * `<clickIdParam>=<clickIdMacro>` as written (not lower-cased: the click route reads the
 * parameter by its exact name and the network fills only its macro as spelled), or a warning
 * when the source has a click parameter but no macro to put in it.
 */
function sourceClickIdPart(source: SourceClickId): { part: string; warnings: { field: string; message: string }[] } {
  if (source.param === null) return { part: "", warnings: [] };
  if (source.macro === null) {
    const message =
      `The traffic source has no clickIdMacro: add ${source.param}=<the network's click id macro> to this link, ` +
      "or its postback cannot carry the source's click id back";
    return { part: "", warnings: [{ field: "clickIdMacro", message }] };
  }
  return { part: `${encodeURIComponent(source.param)}=${source.macro}`, warnings: [] };
}

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type LinkGeneratorRouteDeps = Pick<AppContext, "db" | "config">;

/** GET /link-generator/...: the tracking URL of a brand link on a traffic source. */
export function linkGeneratorRoutes(ctx: LinkGeneratorRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/link-generator/router/brand-link/:brandLinkId/traffic-source/:trafficSourceId/url",
      {
        config: { permission: "catalog.read" },
        schema: {
          tags: ["Link generator"],
          summary: "The tracking URL of a brand link on a traffic source",
          description:
            "tracker: digits only is an id (must be one of the tenant's trackers); otherwise a name of 4-50 " +
            "characters, matched regardless of case: a known name is swapped for its id, a new one becomes a " +
            "tracker on the first click, stored lower-cased as the URL has it (tracker.name answers that name). The URL is lower-cased except " +
            "the source's `<clickIdParam>=<clickIdMacro>`, added as written when the source has both; a source " +
            "with a clickIdParam but no clickIdMacro gets a warning instead.",
          params: LinkGeneratorParams,
          querystring: LinkGeneratorQuery,
          response: { 200: Envelope(GeneratedLink), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const { brandLinkId, trafficSourceId } = request.params;
        await requireLink(ctx.db, tenantId, brandLinkId);
        const source = await requireSource(ctx.db, tenantId, trafficSourceId);
        const tracker =
          request.query.tracker === undefined ? null : await resolveTracker(ctx.db, tenantId, request.query.tracker);
        const base = `${ctx.config.publicBaseUrl.replace(/\/+$/, "")}/go/${brandLinkId}/${trafficSourceId}`;
        const query = tracker === null ? "" : `?tracker=${encodeURIComponent(tracker.id ?? tracker.name)}`;
        const clickId = sourceClickIdPart(source);
        const joiner = clickId.part === "" ? "" : query === "" ? "?" : "&";
        const url = `${`${base}${query}`.toLowerCase()}${joiner}${clickId.part}`;
        return ok({ url, tracker, warnings: clickId.warnings });
      },
    );
  };
}
