import { Type } from "typebox";
import { DateParam, TimeZoneParam } from "../../platform/http/dates.js";
import { PageQuery } from "../../platform/http/envelope.js";
import { NullableString } from "../../platform/http/nullable.js";
import { PathId } from "../../platform/http/path-ids.js";
import { CONVERSION_STATUSES } from "./conversion-status.js";
import { ATTRIBUTION_SOURCES, CONVERSION_TYPES, RECORDABLE_TYPES, TYPE_MEANINGS } from "./conversion-types.js";
import { DESTINATION_KINDS } from "./deliveries.js";
import { RAW_EVENT_RETENTION_DAYS } from "./retention.js";

const meanings = (types: readonly (keyof typeof TYPE_MEANINGS)[]) =>
  types.map((type) => `${type}: ${TYPE_MEANINGS[type]}`).join("; ");

/** A type as answered (and filtered on): every type, Click included (a Click postback carries one). */
export const ConversionTypeName = Type.Enum(CONVERSION_TYPES, {
  description:
    `${meanings(CONVERSION_TYPES)}. The commission types never fire postbacks; Click fires them only where ` +
    "the tenant has click webhooks",
});

/**
 * A type a caller records. Any case is accepted (the route's preValidation reads `signup` as
 * Signup before this enum is checked); Click is not one.
 */
export const RecordableTypeName = Type.Enum(RECORDABLE_TYPES, {
  description:
    `Any case (signup is Signup). ${meanings(RECORDABLE_TYPES)}. ` +
    "Signup, FirstTimeDeposit, Qualifier and Deposit fire postbacks; the commission types never do",
});
/** A comma list of statuses, any case (`pending,approved`). */
export const StatusListParam = Type.String({
  maxLength: 100,
  description: "Comma list of pending, approved, rejected, reversed (any case)",
});

const NullableId = Type.Unsafe<number | null>({ type: ["integer", "null"] });
const NullableText = NullableString();

/** A status as sent: any case, checked by readConversion so a bad one is a 400 naming `status`. */
export const StatusInput = NullableString({
  maxLength: 40,
  description:
    "pending, approved, rejected or reversed (any case); approved when absent. Repeating an externalId with " +
    "another status changes the first record's status (answered with duplicate: true, statusChanged: true)",
});

/** The status of a conversion as answered. */
export const ConversionStatusName = Type.Enum(CONVERSION_STATUSES, {
  description:
    "pending, approved, rejected or reversed. Reports count pending and approved unless their status filter says otherwise",
});

const conversionFields = {
  type: RecordableTypeName,
  clickId: Type.Optional(NullableString({ maxLength: 100 })),
  // No declared type: with the app's coerceTypes a number type would turn "0x10" or true into
  // a float before the value is checked; readConversion checks the value as sent.
  value: Type.Optional(
    Type.Unsafe<number | string | null>({
      description: "Amount as a number or a decimal string, at most 4 decimal places; negative only for commissions",
    }),
  ),
  currency: Type.Optional(
    NullableString({
      maxLength: 3,
      description: "ISO 4217, any case; with a value and no currency, the tenant's defaultCurrency (USD unless set)",
    }),
  ),
  eventName: Type.Optional(NullableString({ maxLength: 100 })),
  externalId: Type.Optional(
    NullableString({ maxLength: 200, description: "Makes the conversion idempotent per tenant" }),
  ),
  occurredAt: Type.Optional(
    NullableString({
      description:
        "ISO 8601 date-time with an offset (Z); default now. At most " +
        `${RAW_EVENT_RETENTION_DAYS} days in the past (the raw-event retention) and at most ` +
        "CONVERSION_MAX_FUTURE_S (default 5 minutes) in the future",
    }),
  ),
  status: Type.Optional(StatusInput),
};

export const NewConversion = Type.Object(conversionFields, { additionalProperties: false });

/** The most items one POST /conversions may carry. */
export const MAX_CONVERSION_BATCH = 1000;

/** One conversion, or `{ items: [...] }` with up to 1,000. */
export const NewConversionsBody = Type.Object(
  {
    ...Type.Partial(NewConversion).properties,
    items: Type.Optional(Type.Array(NewConversion, { minItems: 1, maxItems: MAX_CONVERSION_BATCH })),
  },
  { additionalProperties: false, description: "One conversion object, or { items: [...] } (at most 1,000)" },
);

export const Conversion = Type.Object({
  id: Type.String(),
  type: ConversionTypeName,
  eventName: Type.String(),
  value: Type.Unsafe<number | null>({
    type: ["number", "null"],
    description: "Null when recorded without a value (the reports count it as 0)",
  }),
  currency: NullableText,
  clickId: NullableText,
  externalId: NullableText,
  attributed: Type.Boolean({ description: "False when clickId is absent or unknown in the tenant" }),
  attributionSource: Type.Enum(ATTRIBUTION_SOURCES),
  accountId: NullableId,
  brandId: NullableId,
  programId: NullableId,
  linkId: NullableId,
  trafficSourceId: NullableId,
  trackerId: NullableId,
  occurredAt: Type.String({ format: "date-time" }),
  recordedAt: Type.String({ format: "date-time" }),
  status: ConversionStatusName,
});

/** The names of the catalog items a listed conversion names by id: null without catalog.read, or when gone. */
export const ConversionNames = Type.Object(
  {
    account: NullableText,
    brand: NullableText,
    program: NullableText,
    link: NullableText,
    trafficSource: NullableText,
    tracker: NullableText,
  },
  { description: "Names of accountId ... trackerId; all null when the caller may not read the catalog" },
);

/** A conversion as the list answers it: with its catalog items' names, read in the same statement. */
export const ConversionListItem = Type.Object({ ...Conversion.properties, names: ConversionNames });

export const RecordedConversion = Type.Object({
  ...Conversion.properties,
  duplicate: Type.Boolean({ description: "True when externalId was seen before: this is the first record" }),
  statusChanged: Type.Boolean({
    description: "True when this repeat of an externalId changed the first record's status to the one sent",
  }),
});

export const RecordedBatch = Type.Object({
  items: Type.Array(RecordedConversion),
  created: Type.Integer(),
  duplicates: Type.Integer(),
});

export const PageView = Type.Object({
  url: Type.String(),
  title: NullableText,
  referrer: NullableText,
  at: Type.String({ format: "date-time" }),
});

export const ConversionDetail = Type.Object({
  ...Conversion.properties,
  pageViews: Type.Array(PageView, { description: "Page views of the click up to the conversion" }),
});

export const ConversionListQuery = Type.Object(
  {
    ...PageQuery.properties,
    type: Type.Optional(
      Type.String({
        maxLength: 200,
        description: "Comma list of conversion types, any case (Signup,FirstTimeDeposit); every type when absent",
      }),
    ),
    clickId: Type.Optional(Type.String({ maxLength: 100, description: "Exact click id" })),
    externalId: Type.Optional(Type.String({ maxLength: 200, description: "Exact externalId" })),
    trafficSourceId: Type.Optional(
      Type.String({ maxLength: 1000, description: "Comma list of traffic source ids (3,7), at most 50" }),
    ),
    status: Type.Optional(StatusListParam),
    dateFrom: Type.Optional(DateParam),
    dateTo: Type.Optional(DateParam),
    timeZone: Type.Optional(TimeZoneParam),
  },
  { additionalProperties: false },
);

export const ConversionId = PathId("conversion");

export const StatusChangeBody = Type.Object(
  {
    // Any case: the route's preValidation lower-cases it before this enum is checked.
    status: Type.Enum(CONVERSION_STATUSES, { description: "pending, approved, rejected or reversed (any case)" }),
    reason: Type.Optional(
      NullableString({ maxLength: 500, description: "Why, kept in the history (e.g. 'chargeback')" }),
    ),
  },
  { additionalProperties: false },
);

export const ConversionDelivery = Type.Object({
  destination: Type.Enum(DESTINATION_KINDS),
  target: Type.Object(
    { id: Type.String(), name: NullableText },
    { description: "The webhook, or the traffic source whose postback or Google Ads account it is" },
  ),
  id: Type.String({
    description: "The delivery's id in its destination's history (a Google Ads upload's id once sent)",
  }),
  status: Type.String({
    description:
      "The destination's own words: Queued, Retrying, Delivered, Failed, Cancelled, Held, Paused; Google Ads: pending, accepted, refused, withdrawn",
  }),
  conversionStatus: NullableString({ description: "The conversion's status this delivery carries" }),
  attempts: Type.Integer(),
  lastAttemptAt: NullableString({ format: "date-time" }),
  createdAt: Type.String({ format: "date-time" }),
});

export const StatusHistoryEntry = Type.Object({
  at: Type.String({ format: "date-time" }),
  status: ConversionStatusName,
  reason: NullableText,
  source: Type.Enum(["postback", "api", "dashboard"]),
  by: Type.Object({
    type: Type.Enum(["apiKey", "user", "postback"]),
    id: NullableText,
    name: NullableText,
  }),
});

export const LinkGeneratorParams = Type.Object({
  brandLinkId: Type.Integer({ minimum: 1 }),
  trafficSourceId: Type.Integer({ minimum: 1 }),
});

export const LinkGeneratorQuery = Type.Object(
  {
    tracker: Type.Optional(
      Type.String({
        maxLength: 200,
        description: "Tracker id (digits only) or name (4-50 characters; a new name is created on the first click)",
      }),
    ),
  },
  { additionalProperties: false },
);

export const GeneratedLink = Type.Object({
  url: Type.String({
    description: "The tracking URL, lower-cased except the source's <clickIdParam>=<clickIdMacro> added as written",
  }),
  warnings: Type.Array(Type.Object({ field: Type.String(), message: Type.String() }), {
    description: "Advice, e.g. a source with a clickIdParam but no clickIdMacro",
  }),
  tracker: Type.Union([
    Type.Object({
      id: NullableId,
      name: Type.String(),
      isNew: Type.Boolean({ description: "Not yet a tracker: it becomes one on the first click" }),
    }),
    Type.Null(),
  ]),
});
