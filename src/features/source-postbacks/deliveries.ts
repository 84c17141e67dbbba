import { type DeliveryListing, sqlListing } from "../tracking/index.js";

/** A conversion's postbacks to its traffic source, one per status sent (GET /conversions/{id}/deliveries). */
export const postbackDeliveries: DeliveryListing = sqlListing(
  "trafficSourcePostback",
  `select p.id, p.traffic_source_id as target_id, s.name as target_name, p.status,
          coalesce(p.snapshot ->> 'conversionStatus', 'approved') as conversion_status,
          p.attempts, p.last_attempt_at, p.created_at
     from source_postbacks p join traffic_sources s on s.id = p.traffic_source_id
    where p.tenant_id = $1 and p.conversion_id = $2
    order by p.created_at, p.id
    limit $3`,
);
