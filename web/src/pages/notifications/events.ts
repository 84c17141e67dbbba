import type { paths } from "../../api/schema";

type DeliveryQuery = NonNullable<paths["/api/v1/notifications/webhooks/{id}/deliveries"]["get"]["parameters"]["query"]>;
export type EventType = NonNullable<DeliveryQuery["type"]>;
export type DeliveryStatus = NonNullable<DeliveryQuery["status"]>;

/** Every event type the API sends, with when (docs/notifications.md), in the API's order. */
export const EVENT_TYPES: readonly { type: EventType; when: string }[] = [
  { type: "api_token.expiring", when: "an API key expires within 7 days" },
  { type: "api_token.expired", when: "an API key has expired and stopped working" },
  { type: "issue.opened", when: "an account issue opens or reopens" },
  { type: "issue.closed", when: "an account issue is resolved" },
  { type: "outgoing_webhook.suspended", when: "the service suspends a conversion webhook" },
  { type: "outgoing_webhook.enabled", when: "a suspended conversion webhook is enabled again" },
];

export const DELIVERY_STATUSES: readonly DeliveryStatus[] = ["Queued", "Retrying", "Delivered", "Failed"];

// The lists above must name every value the served OpenAPI document allows, no more.
type Unlisted<All, Listed> = Exclude<All, Listed> extends never ? true : Exclude<All, Listed>;
const everyType: Unlisted<EventType, (typeof EVENT_TYPES)[number]["type"]> = true;
const everyStatus: Unlisted<DeliveryStatus, (typeof DELIVERY_STATUSES)[number]> = true;
void everyType;
void everyStatus;

export const isEventType = (value: unknown): value is EventType => EVENT_TYPES.some((e) => e.type === value);
export const isDeliveryStatus = (value: unknown): value is DeliveryStatus => DELIVERY_STATUSES.some((s) => s === value);
