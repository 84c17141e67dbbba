import { type DeliveryListing, sqlListing } from "../tracking/index.js";

/**
 * A conversion's Google Ads upload (GET /conversions/{id}/deliveries): its id is the upload's
 * once a batch took it (GET .../google-ads/uploads/{id}), the conversion's own while it waits;
 * its status is Google's outcome (pending, accepted, refused) or withdrawn.
 */
export const googleAdsDeliveries: DeliveryListing = sqlListing(
  "googleAds",
  `select coalesce(i.upload_id, i.conversion_id) as id, i.traffic_source_id as target_id, s.name as target_name,
          i.outcome as status, null as conversion_status, coalesce(u.attempts, 0) as attempts,
          case when u.attempts > 0 then u.updated_at end as last_attempt_at, i.created_at
     from google_ads_items i
     join traffic_sources s on s.id = i.traffic_source_id
     left join google_ads_uploads u on u.id = i.upload_id
    where i.tenant_id = $1 and i.conversion_id = $2
    limit $3`,
);
