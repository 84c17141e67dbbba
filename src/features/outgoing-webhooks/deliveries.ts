import { type DeliveryListing, sqlListing } from "../tracking/index.js";

/** A conversion's delivery events, one per webhook and per status sent (GET /conversions/{id}/deliveries). */
export const webhookDeliveries: DeliveryListing = sqlListing(
  "webhook",
  `select e.id, e.webhook_id as target_id, w.name as target_name, e.status,
          coalesce(e.snapshot ->> 'conversionStatus', 'approved') as conversion_status,
          e.attempts, e.last_attempt_at, e.created_at
     from webhook_events e join outgoing_webhooks w on w.id = e.webhook_id
    where e.tenant_id = $1 and e.conversion_id = $2
    order by e.created_at, e.id
    limit $3`,
);
