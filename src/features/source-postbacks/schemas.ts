import { Type } from "typebox";
import { DateParam } from "../../platform/http/dates.js";
import { PageQuery } from "../../platform/http/envelope.js";
import { NullableString } from "../../platform/http/nullable.js";
import { CONVERSION_TYPES } from "../tracking/index.js";

/** Delivery statuses, those of outgoing webhooks without the metering and suspension ones. */
export const POSTBACK_STATUSES = ["Queued", "Retrying", "Delivered", "Failed", "Cancelled", "Paused"] as const;
export type PostbackStatus = (typeof POSTBACK_STATUSES)[number];

/** A query parameter name: letters first, so no prototype key (`__proto__`) and nothing to escape. */
export const ClickIdParam = Type.Unsafe<string | null>({
  type: ["string", "null"],
  minLength: 1,
  maxLength: 64,
  pattern: "^[A-Za-z][A-Za-z0-9_.-]*$",
  description:
    "A letter, then letters, digits, _ . or -: the click parameter holding the source's own click id (e.g. cid, clickid, zoneid), stored with the click; null for none",
});

/** The postback settings of a traffic source, as PATCH takes them (the service fills the defaults). */
export const PostbackInput = Type.Object(
  {
    url: Type.String({
      minLength: 1,
      maxLength: 4096,
      description:
        // biome-ignore lint/suspicious/noTemplateCurlyInString: the placeholder syntax itself
        "URL template with the outgoing-webhook placeholders (${name}, {{name}}, {{{name}}}) plus externalId (the source's click id) and payout",
    }),
    conversionTypes: Type.Optional(
      Type.Array(Type.Enum(CONVERSION_TYPES), {
        uniqueItems: true,
        description: "Types that send a postback; empty (the default) means every type that fires postbacks",
      }),
    ),
    payoutShare: Type.Optional(
      Type.Unsafe<number | null>({
        type: ["number", "null"],
        minimum: 0,
        maximum: 100,
        description: "Percent of the conversion's value sent as payout; null (the default): payout is empty",
      }),
    ),
    enabled: Type.Optional(Type.Boolean({ description: "Default true" })),
    statusChanges: Type.Optional(
      Type.Boolean({
        description:
          "Default false. True: each change of a conversion's status (pending, approved, rejected, reversed) re-fires " +
          "the postback with the new status (conversionStatus placeholder), and conversions recorded as rejected or " +
          "reversed are sent too. False: each conversion is sent once, none recorded as rejected or reversed",
      }),
    ),
  },
  { additionalProperties: false },
);

export const Postback = Type.Object({
  url: Type.String(),
  conversionTypes: Type.Array(Type.String()),
  payoutShare: Type.Union([Type.Number(), Type.Null()]),
  enabled: Type.Boolean(),
  statusChanges: Type.Boolean(),
});
export type Postback = {
  url: string;
  conversionTypes: string[];
  payoutShare: number | null;
  enabled: boolean;
  statusChanges: boolean;
};

export const NullablePostback = Type.Union([PostbackInput, Type.Null()], {
  description: "Postback to the source for its conversions; null removes it",
});
export const PostbackOrNull = Type.Union([Postback, Type.Null()]);

const NullableTime = NullableString({ format: "date-time" });

export const PostbackRecord = Type.Object({
  id: Type.String({ description: "tsp_..." }),
  conversionId: Type.String(),
  conversionStatus: Type.String({ description: "The conversion's status this postback carries" }),
  status: Type.Enum(POSTBACK_STATUSES),
  attempts: Type.Integer(),
  lastAttemptAt: NullableTime,
  createdAt: Type.String({ format: "date-time" }),
});

const Headers = Type.Record(Type.String(), Type.String());
export const PostbackAttempt = Type.Object({
  id: Type.String(),
  attempt: Type.Integer(),
  at: Type.String({ format: "date-time" }),
  urlTemplate: Type.String({ description: "The postback's URL template; the resolved URL is never stored" }),
  method: Type.String(),
  request: Type.Object({ headers: Headers, body: NullableString() }),
  response: Type.Union([Type.Object({ status: Type.Integer(), headers: Headers, body: Type.String() }), Type.Null()]),
  durationMs: Type.Integer(),
  errorType: NullableString({
    description:
      "timeout, connection_refused, dns, tls, http_status, invalid_url, blocked_address, url_origin_changed, url_path_changed",
  }),
  error: NullableString(),
});

const SourceId = Type.Integer({ minimum: 1, maximum: 9_007_199_254_740_991 });
export const SourceParams = Type.Object({ id: SourceId }, { additionalProperties: false });
export const PostbackParams = Type.Object(
  { id: SourceId, postbackId: Type.String({ maxLength: 100 }) },
  { additionalProperties: false },
);

export const PostbackQuery = Type.Object(
  {
    ...PageQuery.properties,
    status: Type.Optional(Type.Enum(POSTBACK_STATUSES)),
    conversionId: Type.Optional(Type.String({ maxLength: 100 })),
    dateFrom: Type.Optional(DateParam),
    dateTo: Type.Optional(DateParam),
  },
  { additionalProperties: false },
);
export const AttemptQuery = Type.Object({ ...PageQuery.properties }, { additionalProperties: false });

export const PostbackTest = Type.Object({
  request: Type.Object({
    method: Type.Literal("GET"),
    url: Type.String({ description: "The URL as sent, with every secret masked ([redacted])" }),
  }),
  response: Type.Union([
    Type.Object({
      status: Type.Integer(),
      body: Type.String({ description: "The receiver's body as text, at most 4 KiB, secrets masked" }),
    }),
    Type.Null(),
  ]),
  error: NullableString({
    description: "Why the test failed (no answer, refused address, a non-2xx status); null: taken",
  }),
});
