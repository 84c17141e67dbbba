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

async function requireRow(
  db: Queryable,
  table: "links" | "traffic_sources",
  tenantId: string,
  id: number,
  what: string,
) {
  const [row] = await db.query(`select 1 from ${table} where tenant_id = $1 and id = $2`, [tenantId, id]);
  if (!row) throw ApiError.notFound(what, id);
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
          summary: "The tracking URL of a brand link on a traffic source, lower-cased",
          description:
            "tracker: digits only is an id (must be one of the tenant's trackers); otherwise a name of 4-50 " +
            "characters, matched regardless of case: a known name is swapped for its id, a new one becomes a " +
            "tracker on the first click, stored lower-cased as the URL has it (tracker.name answers that name).",
          params: LinkGeneratorParams,
          querystring: LinkGeneratorQuery,
          response: { 200: Envelope(GeneratedLink), ...errorResponses },
        },
      },
      async (request) => {
        const tenantId = callerOf(request).tenantId;
        const { brandLinkId, trafficSourceId } = request.params;
        await requireRow(ctx.db, "links", tenantId, brandLinkId, "Brand link");
        await requireRow(ctx.db, "traffic_sources", tenantId, trafficSourceId, "Traffic source");
        const tracker =
          request.query.tracker === undefined ? null : await resolveTracker(ctx.db, tenantId, request.query.tracker);
        const base = `${ctx.config.publicBaseUrl.replace(/\/+$/, "")}/go/${brandLinkId}/${trafficSourceId}`;
        const query = tracker === null ? "" : `?tracker=${encodeURIComponent(tracker.id ?? tracker.name)}`;
        return ok({ url: `${base}${query}`.toLowerCase(), tracker });
      },
    );
  };
}
