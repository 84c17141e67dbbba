import { Type } from "typebox";
import { PageQuery } from "../../platform/http/envelope.js";
import { NullableString } from "../../platform/http/nullable.js";
import { NOTIFICATION_TYPES } from "./events.js";
import { MESSAGE_STATUSES } from "./history.js";

const EventType = Type.Enum(NOTIFICATION_TYPES);
const Events = Type.Array(EventType, {
  uniqueItems: true,
  maxItems: NOTIFICATION_TYPES.length,
  description: `Event types sent to this webhook; empty or omitted means all: ${NOTIFICATION_TYPES.join(", ")}`,
});
const Url = Type.String({
  minLength: 1,
  maxLength: 2048,
  description: "https URL receiving the signed messages (plain http only for hosts in WEBHOOK_ALLOWED_HOSTS)",
});
const Description = NullableString({ maxLength: 500, description: "A note for people; blank clears it" });

export const NewNotificationWebhook = Type.Object(
  { url: Url, events: Type.Optional(Events), description: Type.Optional(Description) },
  { additionalProperties: false },
);

export const NotificationWebhookPatch = Type.Object(
  { url: Type.Optional(Url), events: Type.Optional(Events), description: Type.Optional(Description) },
  { additionalProperties: false, minProperties: 1 },
);

const webhookFields = {
  id: Type.String(),
  url: Type.String(),
  description: NullableString(),
  events: Type.Array(Type.String(), { description: "Empty: every event type" }),
  previousSecretExpiresAt: NullableString({
    format: "date-time",
    description: "Until when the secret replaced by the last rotation still signs alongside the current one",
  }),
  secretUnreadable: Type.Optional(
    Type.Literal(true, {
      description:
        "The stored signing secret no longer opens (its key left SECRETS_KEY): nothing is sent until the secret is rotated",
    }),
  ),
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
};

export const NotificationWebhook = Type.Object(webhookFields);

export const NotificationWebhookWithSecret = Type.Object({
  ...webhookFields,
  secret: Type.String({
    description: "Signing secret (whsec_ + base64), shown only in this answer; store it JSON-escaped",
  }),
});

export const WebhookId = Type.Object({ id: Type.String({ maxLength: 100 }) });

export const DeliveryQuery = Type.Object(
  {
    ...PageQuery.properties,
    status: Type.Optional(Type.Enum(MESSAGE_STATUSES)),
    type: Type.Optional(EventType),
  },
  { additionalProperties: false },
);

const Attempt = Type.Object({
  id: Type.String(),
  attempt: Type.Integer({ description: "1 for the first attempt, 2 for the first retry, ..." }),
  at: Type.String({ format: "date-time" }),
  status: Type.Enum(["succeeded", "failed"]),
  responseStatus: Type.Unsafe<number | null>({ type: ["integer", "null"], description: "null: no answer" }),
  responseBody: NullableString({ description: "The receiver's answer, truncated to 4 KB" }),
  durationMs: Type.Integer(),
  errorType: NullableString({
    description:
      "timeout, connection_refused, dns, tls, http_status, invalid_url, blocked_address, secret_unreadable; null on success",
  }),
  error: NullableString(),
});

export const Delivery = Type.Object({
  id: Type.String({ description: "The message id, sent as webhook-id on every attempt" }),
  type: EventType,
  status: Type.Enum(MESSAGE_STATUSES, { description: "Failed: every retry of the schedule failed" }),
  payload: Type.Object({
    type: EventType,
    timestamp: Type.String({ format: "date-time" }),
    data: Type.Record(Type.String(), Type.Unknown()),
  }),
  attemptCount: Type.Integer(),
  lastAttemptAt: NullableString({ format: "date-time" }),
  nextAttemptAt: NullableString({ format: "date-time", description: "When the next retry is due; null when done" }),
  createdAt: Type.String({ format: "date-time" }),
  attempts: Type.Array(Attempt),
});

export const NotificationTest = Type.Object({
  delivered: Type.Boolean({ description: "True: the receiver answered 2xx" }),
  status: Type.Union([Type.Integer(), Type.Null()], { description: "The receiver's HTTP status; null: no answer" }),
  error: Type.Union([Type.String(), Type.Null()], { description: "Why it was not delivered; null when it was" }),
});
