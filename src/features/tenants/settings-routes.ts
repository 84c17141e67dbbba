import type { FastifyPluginAsyncTypebox } from "@fastify/type-provider-typebox";
import { Type } from "typebox";
import type { AppContext } from "../../context.js";
import { currencyCode } from "../../platform/currency.js";
import { Envelope, errorResponses, ok } from "../../platform/http/envelope.js";
import { ApiError } from "../../platform/http/errors.js";
import { requireTimeZone } from "../../platform/time-zone.js";
import { actorOf } from "../audit/index.js";
import { callerOf } from "../auth/index.js";
import {
  endPreviousPostbackKey,
  MAX_POSTBACK_KEY_GRACE_HOURS,
  previousPostbackKeyUntil,
  rotatePostbackKey,
} from "./postback-key.js";
import { Tenant } from "./schemas.js";
import { getReportingSettings, getTenant, setReportingSettings } from "./service.js";

const DefaultCurrency = Type.String({
  description:
    "ISO 4217 code a conversion value sent without a currency is recorded in (postback and API); USD unless changed",
});

const Settings = Type.Object({
  ...Tenant.properties,
  defaultCurrency: DefaultCurrency,
  reportingCurrency: Type.String({
    description:
      "ISO 4217 code reports show amounts in, each converted at the rate of its event's day; defaultCurrency unless set",
  }),
  reportingCurrencyFollowsDefault: Type.Boolean({
    description: "True when no reporting currency is set: reportingCurrency is defaultCurrency and follows its changes",
  }),
  timeZone: Type.String({
    description:
      "IANA time zone (e.g. Europe/Berlin) in which reports, the conversions list's date filters and the usage series read days; UTC unless set",
  }),
  postbackUrlTemplate: Type.String({
    description: "Where programs send conversions; {postbackKey} is the secret shown once when it is rotated",
  }),
  previousKeyValidUntil: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description:
      "Until when the key the last rotation replaced still works (its grace period); null when it no longer does",
  }),
});

const RotateBody = Type.Object(
  {
    graceHours: Type.Optional(
      Type.Integer({
        minimum: 0,
        maximum: MAX_POSTBACK_KEY_GRACE_HOURS,
        default: 0,
        description: `Hours the replaced key keeps working (0 to ${MAX_POSTBACK_KEY_GRACE_HOURS}, a week); 0: it stops at once`,
      }),
    ),
  },
  { additionalProperties: false },
);

const SettingsPatch = Type.Object(
  {
    defaultCurrency: Type.Optional(
      Type.String({ minLength: 1, maxLength: 3, description: "ISO 4217 code, any case (eur is EUR)" }),
    ),
    reportingCurrency: Type.Optional(
      Type.Union([Type.String({ minLength: 1, maxLength: 3 }), Type.Null()], {
        description: "ISO 4217 code, any case; null goes back to defaultCurrency",
      }),
    ),
    timeZone: Type.Optional(
      Type.String({
        minLength: 1,
        maxLength: 64,
        description: "IANA time zone name, any case (e.g. America/New_York)",
      }),
    ),
  },
  { additionalProperties: false },
);

const RotatedKey = Type.Object({
  postbackKey: Type.String({ description: "The new secret, shown in this answer only" }),
  postbackUrl: Type.String({ description: "The postback URL with the new key and example parameters" }),
  previousKeyValidUntil: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "Until when the replaced key still works; null: it stopped at once",
  }),
});

/** What these routes use of the app's shared parts (assembled in app.ts). */
export type SettingsRouteDeps = Pick<AppContext, "db" | "clock" | "config">;

/** /settings: the tenant's own settings, and rotation of its postback key. */
export function settingsRoutes(ctx: SettingsRouteDeps): FastifyPluginAsyncTypebox {
  const base = ctx.config.publicBaseUrl.replace(/\/+$/, "");
  const parameters = "clickId={clickId}&type=Deposit&value={value}&currency={currency}&externalId={transactionId}";
  const settingsOf = async (tenantId: string) => {
    const tenant = await getTenant(ctx.db, tenantId);
    const money = await getReportingSettings(ctx.db, tenantId);
    const until = await previousPostbackKeyUntil(ctx.db, tenantId, ctx.clock.now());
    if (!tenant || money === null) throw ApiError.notFound("Tenant", tenantId);
    return {
      ...tenant,
      defaultCurrency: money.defaultCurrency,
      reportingCurrency: money.reportingCurrency ?? money.defaultCurrency,
      reportingCurrencyFollowsDefault: money.reportingCurrency === null,
      timeZone: money.timeZone,
      postbackUrlTemplate: `${base}/postback/{postbackKey}?${parameters}`,
      previousKeyValidUntil: until?.toISOString() ?? null,
    };
  };
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
      async (request) => ok(await settingsOf(callerOf(request).tenantId)),
    );

    app.patch(
      "/settings",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Settings"],
          summary: "Change the tenant's settings: defaultCurrency, reportingCurrency, timeZone",
          body: SettingsPatch,
          response: { 200: Envelope(Settings), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const { defaultCurrency, reportingCurrency, timeZone } = request.body;
        const code = (field: string, value: string) => {
          const upper = currencyCode(value.trim());
          if (upper === null) throw ApiError.validation(field, `'${value}' is not an ISO 4217 currency code`);
          return upper;
        };
        const change = {
          ...(defaultCurrency !== undefined ? { defaultCurrency: code("defaultCurrency", defaultCurrency) } : {}),
          ...(reportingCurrency !== undefined
            ? { reportingCurrency: reportingCurrency === null ? null : code("reportingCurrency", reportingCurrency) }
            : {}),
          ...(timeZone !== undefined ? { timeZone: requireTimeZone("timeZone", timeZone) } : {}),
        };
        await ctx.db.transaction((tx) =>
          setReportingSettings(tx, caller.tenantId, change, actorOf(caller), ctx.clock.now()),
        );
        return ok(await settingsOf(caller.tenantId), "Saved");
      },
    );

    app.post(
      "/settings/postback-key",
      {
        config: { permission: "account.admin" },
        // A rotation posted without a body (as before graceHours) is a rotation without a grace period.
        preValidation: async (request) => {
          request.body ??= {};
        },
        schema: {
          tags: ["Settings"],
          summary: "Rotate the postback key; the new one is shown only here",
          description:
            "The replaced key stops at once, or keeps working for graceHours (up to a week) so programs can be " +
            "moved to the new URL one by one. Rotating again during a grace period ends it: only the key just " +
            "replaced keeps working, and the one before it stops at once.",
          body: RotateBody,
          response: { 201: Envelope(RotatedKey), ...errorResponses },
        },
      },
      async (request, reply) => {
        const caller = callerOf(request);
        const graceHours = request.body.graceHours ?? 0;
        const rotated = await ctx.db.transaction((tx) =>
          rotatePostbackKey(tx, caller.tenantId, actorOf(caller), ctx.clock.now(), graceHours),
        );
        const { postbackKey, previousKeyValidUntil } = rotated;
        return reply.status(201).send(
          ok(
            {
              postbackKey,
              postbackUrl: `${base}/postback/${postbackKey}?${parameters}`,
              previousKeyValidUntil: previousKeyValidUntil?.toISOString() ?? null,
            },
            previousKeyValidUntil
              ? `Rotated; the previous key works until ${previousKeyValidUntil.toISOString()}`
              : "Rotated",
          ),
        );
      },
    );

    app.delete(
      "/settings/postback-key/previous",
      {
        config: { permission: "account.admin" },
        schema: {
          tags: ["Settings"],
          summary: "End the replaced postback key's grace period now: it stops working at once",
          response: { 200: Envelope(Type.Object({ ended: Type.Boolean() })), ...errorResponses },
        },
      },
      async (request) => {
        const caller = callerOf(request);
        const ended = await ctx.db.transaction((tx) =>
          endPreviousPostbackKey(tx, caller.tenantId, actorOf(caller), ctx.clock.now()),
        );
        if (!ended) throw new ApiError("not_found", "No replaced postback key is still working");
        return ok({ ended }, "The previous postback key no longer works");
      },
    );
  };
}
