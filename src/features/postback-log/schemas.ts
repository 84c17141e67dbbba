import { Type } from "typebox";
import { DateParam, TimeZoneParam } from "../../platform/http/dates.js";
import { PageQuery } from "../../platform/http/envelope.js";
import { POSTBACK_LOG_OUTCOMES } from "./entry.js";
import { POSTBACK_LOG_RETENTION_DAYS } from "./retention.js";

const NullableText = Type.Union([Type.String(), Type.Null()]);

export const PostbackLogLineSchema = Type.Object({
  id: Type.String({ description: "pbl_..." }),
  at: Type.String({ format: "date-time", description: "When the call arrived" }),
  via: Type.Union([Type.Literal("postback"), Type.Literal("api")], {
    description: "postback: a call of /postback/{key}; api: an item of POST /api/v1/conversions",
  }),
  outcome: Type.Enum(POSTBACK_LOG_OUTCOMES, {
    description:
      "recorded: a new conversion; duplicate: its externalId was seen, nothing recorded; statusChanged: a repeat " +
      "that changed the first record's status; refused: nothing recorded, see reason and field",
  }),
  reason: Type.Union([Type.String(), Type.Null()], { description: "Why it was refused, as the caller was answered" }),
  field: Type.Union([Type.String(), Type.Null()], { description: "The field the refusal is about, when one is" }),
  conversionId: Type.Union([Type.String(), Type.Null()], {
    description: "The conversion recorded, or the first record a duplicate repeats",
  }),
  clickId: NullableText,
  externalId: NullableText,
  type: Type.Union([Type.String(), Type.Null()], { description: "The type as recorded, or as sent when refused" }),
  query: Type.Record(Type.String(), Type.String(), {
    description:
      "The fields sent (query and body), at most 30, each cut to 256 characters, every credential-named field and " +
      "credential-shaped value redacted",
  }),
});

export const PostbackLogQuery = Type.Object(
  {
    ...PageQuery.properties,
    outcome: Type.Optional(
      Type.String({
        maxLength: 200,
        description: `Comma list of ${POSTBACK_LOG_OUTCOMES.join(", ")}; every outcome when absent`,
      }),
    ),
    type: Type.Optional(
      Type.String({ maxLength: 500, description: "Comma list of types, any case, as recorded or sent" }),
    ),
    clickId: Type.Optional(Type.String({ maxLength: 100, description: "Exact click id" })),
    externalId: Type.Optional(Type.String({ maxLength: 200, description: "Exact externalId" })),
    dateFrom: Type.Optional(DateParam),
    dateTo: Type.Optional(DateParam),
    timeZone: Type.Optional(TimeZoneParam),
  },
  {
    additionalProperties: false,
    description: `Lines are kept ${POSTBACK_LOG_RETENTION_DAYS} days`,
  },
);
