import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { currencyCode } from "../../platform/currency.js";
import { parseDateBound } from "../../platform/http/dates.js";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { actorOf } from "../audit/index.js";
import { callerOf } from "../auth/index.js";
import { ratesInForce, setTenantRates } from "./service.js";

/** Codes one PUT may set. */
const MAX_CODES = 200;
/** Rates are stored as numeric(30, 10): a smaller one would be stored as 0. */
const SMALLEST_RATE = 1e-10;
const LARGEST_RATE = 1e12;
const DATE_ONLY = /^\d{4}-\d{2}-\d{2}$/;

const daySchema = (description: string) => Type.String({ description, examples: ["2026-11-27"] });

const Rates = Type.Object(
  {
    date: daySchema("The day (UTC, YYYY-MM-DD) the rates are in force on"),
    base: Type.Literal("EUR", { description: "Every rate is in units of its currency per 1 EUR" }),
    rates: Type.Record(Type.String(), Type.Number(), {
      description:
        "Every rate in force on the day, by ISO 4217 code: units of the currency per 1 EUR, the latest dated on or before the day (EUR is always 1)",
      examples: [{ EUR: 1, GBP: 0.8312, USD: 1.0412 }],
    }),
    sources: Type.Record(Type.String(), Type.Union([Type.Literal("tenant"), Type.Literal("reference")]), {
      description:
        "Where each rate comes from: `tenant` (this tenant's own, PUT /exchange-rates) or `reference` (the ECB's euro reference rates); the later day wins, on the same day the tenant's",
      examples: [{ EUR: "reference", GBP: "reference", USD: "tenant" }],
    }),
  },
  { description: "The exchange rates in force on one day" },
);

const RatesQuery = Type.Object(
  { date: Type.Optional(daySchema("The day (UTC, YYYY-MM-DD) whose rates in force are shown; today unless given")) },
  { additionalProperties: false },
);

const RatesBody = Type.Object(
  {
    date: daySchema("The day (UTC, YYYY-MM-DD) the rates are dated: in force from it until a later one"),
    rates: Type.Record(
      Type.String(),
      Type.Number({ exclusiveMinimum: 0, maximum: LARGEST_RATE, description: "Units of the currency per 1 EUR" }),
      {
        minProperties: 1,
        maxProperties: MAX_CODES,
        description: `The tenant's own rates of the day by ISO 4217 code, any case (usd is USD), at most ${MAX_CODES}; never EUR (always 1). A later PUT of the same day and code replaces the rate`,
        examples: [{ USD: 1.0412, GBP: 0.8312 }],
      },
    ),
  },
  { additionalProperties: false },
);

/** A day as a request names it: YYYY-MM-DD, a real date from 0001 to 9999; a 400 naming `field` otherwise. */
function parseDay(field: string, value: string): string {
  if (!DATE_ONLY.test(value))
    throw ApiError.validation(field, `must be a date (YYYY-MM-DD), got '${value.slice(0, 40)}'`);
  parseDateBound(field, value, "from");
  return value;
}

/** The body's rates by upper-cased code; each bad code, EUR or rate a 400 naming `rates.<code as sent>`. */
function parseRates(rates: Readonly<Record<string, number>>): Record<string, number> {
  const out: Record<string, number> = {};
  const sentAs = new Map<string, string>();
  for (const [key, rate] of Object.entries(rates)) {
    const field = `rates.${key.slice(0, 40)}`;
    const code = currencyCode(key.trim());
    if (code === "EUR") throw ApiError.validation(field, "is always 1 (every rate is per 1 EUR): leave it out");
    if (code === null) throw ApiError.validation(field, `'${key.slice(0, 40)}' is not an ISO 4217 currency code`);
    const earlier = sentAs.get(code);
    if (earlier !== undefined) throw ApiError.validation(field, `names the same currency as rates.${earlier}`);
    sentAs.set(code, key);
    if (!Number.isFinite(rate) || rate < SMALLEST_RATE || rate > LARGEST_RATE) {
      throw ApiError.validation(field, `must be a positive number from ${SMALLEST_RATE} to ${LARGEST_RATE}`);
    }
    out[code] = rate;
  }
  return out;
}

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type ExchangeRateRouteDeps = Pick<AppContext, "db" | "clock">;

/** /exchange-rates: the rates in force on a day, and the tenant's own rates of a day. */
export function exchangeRateRoutes(ctx: ExchangeRateRouteDeps): FastifyPluginAsyncTypebox {
  return async (app) => {
    app.get(
      "/exchange-rates",
      {
        config: { permission: "reports.read" },
        schema: {
          tags: ["Exchange rates"],
          summary: "The exchange rates in force on a day (units per 1 EUR), as reports convert amounts with them",
          querystring: RatesQuery,
          response: { 200: Envelope(Rates), ...errorResponses },
        },
      },
      async (request) => {
        const { date } = request.query;
        const day = date === undefined ? ctx.clock.now().toISOString().slice(0, 10) : parseDay("date", date);
        return ok(await ratesInForce(ctx.db, callerOf(request).tenantId, day));
      },
    );

    app.put(
      "/exchange-rates",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Exchange rates"],
          summary: "Set the tenant's own exchange rates of a day; they win over the reference rates of that day",
          body: RatesBody,
          response: { 200: Envelope(Rates), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const day = parseDay("date", request.body.date);
        const rates = parseRates(request.body.rates);
        const change = { actor: actorOf(caller), at: ctx.clock.now(), requestId: request.id };
        await ctx.db.transaction((tx) => setTenantRates(tx, caller.tenantId, day, rates, change));
        return ok(await ratesInForce(ctx.db, caller.tenantId, day), "Saved");
      },
    );
  };
}
