import { Type } from "typebox";
import { PageQuery } from "../../platform/http/envelope.js";
import { NullableString } from "../../platform/http/nullable.js";
import { CONVERSION_TYPES } from "../tracking/index.js";

export const UPLOAD_STATUSES = ["Sent", "Partly", "Failed", "Retrying"] as const;
export type UploadStatus = (typeof UPLOAD_STATUSES)[number];
export const ITEM_OUTCOMES = ["accepted", "refused", "pending", "withdrawn"] as const;
export type ItemOutcome = (typeof ITEM_OUTCOMES)[number];
/** The outcomes of an item not taken into an upload: waiting for one, or withdrawn before it. */
export const QUEUE_OUTCOMES = ["pending", "withdrawn"] as const;

const SourceId = Type.Integer({ minimum: 1, maximum: Number.MAX_SAFE_INTEGER, description: "The traffic source's id" });
export const SourceParams = Type.Object({ id: SourceId }, { additionalProperties: false });
export const UploadParams = Type.Object(
  { id: SourceId, uploadId: Type.String({ maxLength: 100, description: "The upload's id (gup_...)" }) },
  { additionalProperties: false },
);

// Google Ads shows customer ids as 123-456-7890; the API takes the ten digits.
const CustomerId = (description: string) =>
  Type.String({
    pattern: "^[0-9]{3}-?[0-9]{3}-?[0-9]{4}$",
    description: `${description} (123-456-7890 or 1234567890)`,
  });
const ActionId = Type.String({
  pattern: "^[0-9]{1,20}$",
  description: "The Google Ads conversion action id (digits) that receives this type",
});
const ConsentStatus = Type.Union([Type.Literal("CONSENT_GRANTED"), Type.Literal("CONSENT_DENIED")]);
const Consent = Type.Object(
  { adUserData: Type.Optional(ConsentStatus), adPersonalization: Type.Optional(ConsentStatus) },
  {
    additionalProperties: false,
    description: "Consent sent with every upload (request-level consent of the Data Manager API); omit to send none",
  },
);
// Click is never recorded as a conversion (the redirect makes clicks), so it cannot be uploaded.
const UPLOADABLE_TYPES = CONVERSION_TYPES.filter((type) => type !== "Click");
const ConversionActions = Type.Object(
  Object.fromEntries(UPLOADABLE_TYPES.map((type) => [type, Type.Optional(ActionId)])),
  {
    additionalProperties: false,
    minProperties: 1,
    description: "Conversion type -> conversion action id; conversions of other types are not uploaded",
  },
);

export const GoogleAdsBody = Type.Object(
  {
    accountId: CustomerId("The Google Ads account that receives the conversions"),
    loginAccountId: Type.Optional(
      Type.Union([
        CustomerId("The manager account the credentials sign in to, when uploading through one"),
        Type.Null(),
      ]),
    ),
    credentials: Type.Object(
      {
        clientId: Type.String({ minLength: 1, maxLength: 300, description: "OAuth client id" }),
        clientSecret: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 300,
            description: "OAuth client secret; required the first time, kept when omitted later; never shown again",
          }),
        ),
        refreshToken: Type.Optional(
          Type.String({
            minLength: 1,
            maxLength: 2048,
            description: `Refresh token granting the scope https://www.googleapis.com/auth/datamanager; required the first time, kept when omitted later; never shown again`,
          }),
        ),
      },
      { additionalProperties: false },
    ),
    conversionActions: ConversionActions,
    consent: Type.Optional(Type.Union([Consent, Type.Null()])),
    enabled: Type.Boolean({ description: "Whether conversions are queued and uploaded" }),
  },
  { additionalProperties: false },
);

export const GoogleAdsIntegration = Type.Object({
  trafficSourceId: Type.Integer(),
  accountId: Type.String(),
  loginAccountId: NullableString(),
  credentials: Type.Object(
    {
      clientId: Type.String(),
      unreadable: Type.Optional(
        Type.Literal(true, {
          description:
            "The stored client secret and refresh token no longer open (their key left SECRETS_KEY): nothing is uploaded until both are entered again",
        }),
      ),
    },
    { description: "The client id only: secrets are never shown" },
  ),
  conversionActions: Type.Record(Type.String(), Type.String()),
  consent: Type.Union([Consent, Type.Null()]),
  enabled: Type.Boolean(),
  pendingEvents: Type.Integer({ description: "Conversions queued and not yet taken into an upload" }),
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
});

export const GoogleAnswerSchema = Type.Object(
  {
    at: Type.String({ format: "date-time" }),
    httpStatus: Type.Union([Type.Integer(), Type.Null()], { description: "Null when no answer came" }),
    requestId: NullableString({ description: "Google's request id of an accepted upload" }),
    status: NullableString({
      description: "OK, a google.rpc status (INVALID_ARGUMENT, ...), an OAuth error or NETWORK_ERROR",
    }),
    message: NullableString(),
  },
  { description: "Google's answer to the last attempt" },
);

export const Upload = Type.Object({
  id: Type.String(),
  createdAt: Type.String({ format: "date-time" }),
  status: Type.Enum(UPLOAD_STATUSES),
  events: Type.Integer({ description: "Conversions the upload holds" }),
  accepted: Type.Integer(),
  refused: Type.Integer(),
  attempts: Type.Integer(),
  nextAttemptAt: NullableString({ format: "date-time" }),
  response: Type.Union([GoogleAnswerSchema, Type.Null()]),
});

const STATUS_NOTE = NullableString({
  description:
    "What Google was (not) told of a change of the conversion's status after its upload, e.g. that a conversion reversed after Google accepted it must be retracted in Google Ads",
});

export const UploadItem = Type.Object({
  conversionId: Type.String(),
  conversionType: Type.String(),
  gclid: Type.String(),
  outcome: Type.Enum(ITEM_OUTCOMES, {
    description:
      "accepted or refused by Google (or by our check before sending), pending (waiting for a retry), or withdrawn: its conversion was rejected or reversed before Google accepted it, so it is not sent",
  }),
  reason: NullableString(),
  statusNote: STATUS_NOTE,
});

export const QueueItem = Type.Object({
  conversionId: Type.String(),
  conversionType: Type.String(),
  gclid: Type.String(),
  createdAt: Type.String({ format: "date-time", description: "When it was queued" }),
  outcome: Type.Enum(QUEUE_OUTCOMES, {
    description:
      "pending: waiting for its upload; withdrawn: its conversion was rejected or reversed first, so it is not sent (queued again if it is approved while its click is inside the 90 days)",
  }),
  reason: NullableString(),
  statusNote: STATUS_NOTE,
});

export const QueueQuery = Type.Object(
  { ...PageQuery.properties, outcome: Type.Optional(Type.Enum(QUEUE_OUTCOMES)) },
  { additionalProperties: false },
);

export const UploadDetail = Type.Object({ ...Upload.properties, items: Type.Array(UploadItem) });

export const UploadQuery = Type.Object(
  { ...PageQuery.properties, status: Type.Optional(Type.Enum(UPLOAD_STATUSES)) },
  { additionalProperties: false },
);

export const ConnectionTest = Type.Object({
  ok: Type.Boolean({ description: "True: the token exchange worked and Google validated the sample events" }),
  error: Type.Union([Type.String(), Type.Null()], {
    description: "Why not: the token exchange's or Google's refusal (status, message, the fields it named)",
  }),
});
