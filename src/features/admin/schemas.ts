import { Type } from "typebox";
import { PageQuery } from "../../platform/http/envelope.js";
import { PermissionName } from "../auth/index.js";
import { TenantSchema } from "../tenants/index.js";

const EntitlementsPatch = Type.Object(
  {
    apiTokens: Type.Optional(Type.Boolean({ description: "May manage API tokens (default on)" })),
    clickWebhooks: Type.Optional(Type.Boolean({ description: "Click conversions may fire webhooks (default off)" })),
  },
  { additionalProperties: false },
);

// One schema with two types, not a union: with the app's coerceTypes, ajv tries the integer
// branch of a union first and turns null into 0, so "unlimited" would be stored as "none".
const Allowance = Type.Unsafe<number | null>({
  type: ["integer", "null"],
  minimum: 0,
  description: "Webhook postbacks per calendar month (UTC); null is unlimited; default 100000",
});

export const NewTenantBody = Type.Object(
  {
    name: Type.String({ minLength: 1, maxLength: 200 }),
    entitlements: Type.Optional(EntitlementsPatch),
    webhookAllowance: Type.Optional(Allowance),
  },
  { additionalProperties: false },
);

export const TenantPatchBody = Type.Object(
  {
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    entitlements: Type.Optional(EntitlementsPatch),
    webhookAllowance: Type.Optional(Allowance),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const CreatedTenant = Type.Object({
  ...TenantSchema.properties,
  postbackKey: Type.String({ description: "Secret of the tenant's postback URL; shown once" }),
});

export const WebhookUsageQuery = Type.Object({
  month: Type.Optional(
    Type.String({
      pattern: "^[0-9]{4}-(0[1-9]|1[0-2])$",
      description: "Calendar month (UTC), YYYY-MM; default the current one",
    }),
  ),
});

export const WebhookUsageSchema = Type.Object({
  month: Type.String({ description: "YYYY-MM" }),
  sent: Type.Integer({ description: "Postbacks counted this month (each event once, at its first attempt)" }),
  allowance: Type.Unsafe<number | null>({
    type: ["integer", "null"],
    description: "Monthly allowance; null is unlimited",
  }),
  sendingLimit: Type.Unsafe<number | null>({
    type: ["integer", "null"],
    description: "Events are sent while `sent` is below this (110% of the allowance); beyond it they are Held",
  }),
  held: Type.Integer({ description: "Events held now, waiting for the allowance" }),
});

export const TenantId = Type.Object({ id: Type.String({ pattern: "^ten_[0-9a-z]+$", maxLength: 64 }) });
export const UserIdParam = Type.Object({ id: Type.String({ pattern: "^usr_[0-9a-z]+$", maxLength: 64 }) });

export const UserPatchBody = Type.Object(
  {
    disabled: Type.Optional(Type.Boolean()),
    name: Type.Optional(Type.String({ minLength: 1, maxLength: 200 })),
    permissions: Type.Optional(Type.Array(PermissionName, { uniqueItems: true })),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const TenantListQuery = Type.Object({
  ...PageQuery.properties,
  search: Type.Optional(Type.String({ maxLength: 200 })),
});

export const JobName = Type.Object({ name: Type.String({ pattern: "^[a-z0-9-]+$", maxLength: 64 }) });

export const RunJobBody = Type.Union([
  Type.Object(
    { now: Type.Optional(Type.String({ format: "date-time", description: "Run as if the clock read this instant" })) },
    { additionalProperties: false },
  ),
  Type.Null(),
]);

export const JobRun = Type.Object({
  job: Type.String(),
  slot: Type.String(),
  ran: Type.Boolean(),
  summary: Type.Union([Type.Record(Type.String(), Type.Unknown()), Type.Null()]),
  startedAt: Type.String({ format: "date-time" }),
  finishedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()]),
});

export const JobInfo = Type.Object({ name: Type.String(), description: Type.String(), cron: Type.String() });
