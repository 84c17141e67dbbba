import { Type } from "typebox";
import { PageQuery } from "../../platform/http/envelope.js";
import { NullableString } from "../../platform/http/nullable.js";
import { ATTRIBUTION_SOURCES, CONVERSION_TYPES } from "../tracking/index.js";

export const WEBHOOK_STATUSES = ["Enabled", "Disabled", "Suspended"] as const;
export type WebhookStatus = (typeof WEBHOOK_STATUSES)[number];

const NullableSourceId = Type.Unsafe<number | null>({
  type: ["integer", "null"],
  minimum: 1,
  maximum: Number.MAX_SAFE_INTEGER,
  description: "Omitted or null: affiliate-level (every conversion); else only conversions of that traffic source",
});

const ConversionTypes = Type.Array(Type.Enum(CONVERSION_TYPES), {
  uniqueItems: true,
  description:
    "Types that fire it; empty means every eligible type. Commission types never fire; Click only with click webhooks on",
});
const EventNames = Type.Record(Type.String(), Type.String({ minLength: 1, maxLength: 100 }), {
  description: "Conversion type -> the event name this receiver gets instead (eventName placeholder and payload)",
});
const AttributionSources = Type.Array(Type.Enum(ATTRIBUTION_SOURCES), {
  uniqueItems: true,
  description: "Attribution sources that fire it; empty means all",
});

const StatusChanges = Type.Boolean({
  description:
    "Default false. True: each change of a conversion's status (pending, approved, rejected, reversed) that the " +
    "filters let through sends that conversion again with its new status (conversionStatus placeholder, status in " +
    "the POST payload), and conversions recorded as rejected or reversed are sent too. False: a receiver that does " +
    "not know statuses gets each conversion once, and none recorded as rejected or reversed",
});

const fields = {
  name: Type.String({ minLength: 1, maxLength: 200 }),
  url: Type.String({
    minLength: 1,
    maxLength: 4096,
    description:
      // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder syntax itself
      "URL template with ${name}, {{name}} or {{{name}}} placeholders; a raw {{{name}}} is refused in the scheme, user info, host or port",
  }),
  method: Type.Enum(["GET", "POST"]),
  trafficSourceId: Type.Optional(NullableSourceId),
  conversionTypes: Type.Optional(ConversionTypes),
  eventNames: Type.Optional(EventNames),
  attributionSources: Type.Optional(AttributionSources),
  statusChanges: Type.Optional(StatusChanges),
  status: Type.Optional(
    Type.Enum(["Enabled", "Disabled"], { description: "Default Enabled; Suspended is set by the service" }),
  ),
};

export const NewWebhook = Type.Object(fields, { additionalProperties: false });
export const WebhookPatch = Type.Object(
  {
    ...Type.Partial(Type.Object({ name: fields.name, url: fields.url, method: fields.method })).properties,
    trafficSourceId: fields.trafficSourceId,
    conversionTypes: fields.conversionTypes,
    eventNames: fields.eventNames,
    attributionSources: fields.attributionSources,
    statusChanges: fields.statusChanges,
    status: Type.Optional(
      Type.Enum(["Enabled", "Disabled"], {
        description: "Enabled or Disabled; a Suspended webhook is re-enabled here",
      }),
    ),
  },
  { additionalProperties: false, minProperties: 1 },
);

export const Webhook = Type.Object({
  id: Type.String(),
  name: Type.String(),
  url: Type.String(),
  method: Type.Enum(["GET", "POST"]),
  trafficSourceId: Type.Unsafe<number | null>({ type: ["integer", "null"] }),
  conversionTypes: Type.Array(Type.String()),
  eventNames: Type.Record(Type.String(), Type.String()),
  attributionSources: Type.Array(Type.String()),
  statusChanges: Type.Boolean(),
  status: Type.Enum(WEBHOOK_STATUSES),
  statusReason: NullableString(),
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
});

export const WebhookListQuery = Type.Object(
  {
    ...PageQuery.properties,
    trafficSourceId: Type.Optional(
      Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "Only webhooks bound to this source" }),
    ),
    level: Type.Optional(
      Type.Enum(["affiliate", "trafficSource"], { description: "affiliate-level or source-bound only" }),
    ),
    status: Type.Optional(Type.Enum(WEBHOOK_STATUSES)),
    search: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive part of the name" })),
  },
  { additionalProperties: false },
);

export const WebhookId = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const ValidateBody = Type.Object({ url: Type.String({ maxLength: 4096 }) }, { additionalProperties: false });
export const ValidateAnswer = Type.Object({
  valid: Type.Boolean(),
  message: Type.String(),
  placeholder: NullableString({ description: "The placeholder at fault, as written" }),
  sampleUrl: NullableString({ description: "The URL rendered with sample values" }),
});

export const PlaceholderInfo = Type.Object({
  name: Type.String(),
  simulateOnly: Type.Boolean({ description: "Filled only by Simulate; empty in live deliveries" }),
});

export const SimulateBody = Type.Object(
  {
    conversionType: Type.Optional(
      Type.Enum(CONVERSION_TYPES, { description: "Default: the webhook's first type filter, else Deposit" }),
    ),
  },
  { additionalProperties: false },
);
