import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { type TSchema, Type } from "typebox";
import type { AppContext } from "../../context.js";
import { errorResponses, Pagination } from "../../platform/http/envelope.js";
import { addDays } from "../../platform/time-zone.js";
import { callerOf } from "../auth/index.js";
import { RESOURCE_BY_TABLE } from "../catalog/index.js";
import { CONVERSION_STATUSES } from "../tracking/index.js";
import { ReportsBusy } from "./gate.js";
import type { ParamDef, ReportLimits } from "./params.js";
import { REPORTS, type ReportDefinition } from "./registry.js";
import { STATS } from "./stats.js";

/**
 * The dates "Try it out" starts from: the dashboard's default window (the last 30 days, UTC, as
 * web/src/pages/reports/report-state.ts), computed when the routes (so the document) are built.
 */
type ExampleWindow = { from: string; to: string };

function exampleWindow(now: Date): ExampleWindow {
  const today = now.toISOString().slice(0, 10);
  return { from: addDays(today, -29), to: today };
}

function paramSchema(def: ParamDef, limits: ReportLimits, window: ExampleWindow): TSchema {
  const description = def.description;
  switch (def.kind) {
    case "list":
      return Type.String({ description });
    case "date":
      return Type.String({
        example: window[def.end],
        examples: [window[def.end]],
        description: `A date (the whole local day in timeZone), a date-time with Z or an offset (that instant), or a date-time without one (wall time in timeZone), from 0001-01-01 to 9999-12-31. ${description}. A window spans at most ${limits.maxWindowDays} days`,
      });
    case "zone":
      return Type.String({ maxLength: 64, examples: ["Europe/Berlin"], description });
    case "integer":
      return Type.Integer({
        minimum: def.min,
        maximum: def.max,
        description: `${description} (default ${def.default})`,
      });
    case "id":
      return Type.Integer({ minimum: 1, description });
    case "enum":
      return Type.String({ enum: [...def.values], description });
    case "text":
      return Type.String({ maxLength: def.maxLength, description });
  }
}

/**
 * The query schema the OpenAPI document shows, made from the registry's parameters. No
 * `default`s: the validator would write them into the query, over a value parseParams reads.
 */
function querySchema(report: ReportDefinition, limits: ReportLimits, window: ExampleWindow) {
  return Type.Object(
    Object.fromEntries(report.parameters.map((def) => [def.name, Type.Optional(paramSchema(def, limits, window))])),
    { additionalProperties: false },
  );
}

const Metrics = Type.Object(
  Object.fromEntries(STATS.map((s) => [s.name, Type.Number({ description: s.description })])),
);

function withMetrics(item: TSchema) {
  return Type.Object({
    ...(item as ReturnType<typeof Type.Object>).properties,
    metrics: Metrics,
    comparisonMetrics: Type.Optional(Metrics),
  });
}

const ReportMetaSchema = Type.Object(
  {
    timeZone: Type.String({ description: "The IANA time zone the report's days and windows are read in" }),
    currency: Type.String({ description: "ISO 4217 code every amount of the answer is in" }),
    status: Type.Array(Type.Enum(CONVERSION_STATUSES), {
      description: "The conversion statuses counted (the status parameter, default pending and approved)",
    }),
    unconverted: Type.Array(
      Type.Object({
        currency: Type.String({ description: "A currency with no exchange rate on or before some of its days" }),
        conversions: Type.Number({ description: "How many of its conversions were left out of the converted sums" }),
      }),
      { description: "Amounts left out of the sums for want of a rate, by currency; empty when everything converted" },
    ),
  },
  { description: "What the answer's money and time are in, and which conversions it counts" },
);

const PerformanceData = Type.Union([
  Type.Array(
    Type.Object({}, { additionalProperties: true, description: "One row: fields, <field>Id for entities, stats" }),
  ),
  Type.Object({ columns: Type.Array(Type.String()), rows: Type.Array(Type.Array(Type.Unknown())) }),
]);

const DATA: Record<string, TSchema> = {
  performance: PerformanceData,
  "account-metrics": Type.Array(withMetrics(RESOURCE_BY_TABLE.accounts.item)),
  "link-metrics": Type.Array(withMetrics(RESOURCE_BY_TABLE.links.item)),
};

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type ReportRouteDeps = Pick<AppContext, "db" | "clock" | "config" | "reports">;

/** One GET route per registered report. */
export function reportRoutes(ctx: ReportRouteDeps): FastifyPluginAsyncTypebox {
  // This app's limits (REPORT_MAX_WINDOW_DAYS): another app in the same process may have others.
  const limits: ReportLimits = { maxWindowDays: ctx.config.reportMaxWindowDays };
  return async (app) => {
    const window = exampleWindow(ctx.clock.now());
    for (const report of REPORTS) {
      app.get(
        report.path,
        {
          config: { permission: "reports.read" },
          // The registry's parser reads the raw query, so HTTP and MCP refuse a bad value with the
          // same message; the schema here documents the parameters.
          attachValidation: true,
          schema: {
            tags: ["Reports"],
            summary: report.title,
            description: report.description,
            querystring: querySchema(report, limits, window),
            response: {
              200: Type.Object({
                code: Type.String(),
                message: Type.String(),
                data: DATA[report.name] ?? Type.Unknown(),
                pagination: Pagination,
                meta: ReportMetaSchema,
              }),
              ...errorResponses,
            },
          },
        },
        async (request, reply) => {
          const tenantId = callerOf(request).tenantId;
          // The tenant's share: a slot, or a place in its small queue, or a 429 before any query.
          try {
            const result = await ctx.reports.run(tenantId, () =>
              report.run(ctx.db, tenantId, request.query as Record<string, unknown>, ctx.clock.now(), limits),
            );
            return { code: "ok", message: "OK", ...result };
          } catch (error) {
            if (error instanceof ReportsBusy) throw error.toApiError(reply);
            throw error;
          }
        },
      );
    }
  };
}
