import type { Queryable } from "../../platform/db/index.js";

/** The ways out a conversion takes; a destination added later adds its name here. */
export const DESTINATION_KINDS = ["webhook", "trafficSourcePostback", "googleAds"] as const;
export type DestinationKind = (typeof DESTINATION_KINDS)[number];

/** One place a conversion was queued for, as GET /conversions/{id}/deliveries answers it. */
export interface ConversionDelivery {
  destination: DestinationKind;
  /** What it went to: the webhook, or the traffic source whose postback or ad account it is. */
  target: { id: string; name: string | null };
  /** The delivery's own id in its destination's history. */
  id: string;
  /** The destination's own status words (Delivered, Retrying, accepted, withdrawn ...). */
  status: string;
  /** The conversion's status this delivery carries (a change of status may queue another). */
  conversionStatus: string | null;
  attempts: number;
  lastAttemptAt: string | null;
  createdAt: string;
}

/**
 * A destination's listing of the deliveries of one conversion. Each destination feature
 * exports one and app.ts registers it on the Tracking, so the conversion's page reads every
 * place it went from one call, whatever destinations exist.
 */
export interface DeliveryListing {
  kind: DestinationKind;
  /** At most `limit` of this conversion's deliveries, oldest first. */
  deliveriesOf(db: Queryable, tenantId: string, conversionId: string, limit: number): Promise<ConversionDelivery[]>;
}

/** Deliveries one conversion lists at most per destination: a conversion changed many times stays bounded. */
export const DELIVERIES_PER_DESTINATION = 200;

/** Every registered destination's deliveries of one conversion, oldest first. */
export async function deliveriesOf(
  db: Queryable,
  listings: readonly DeliveryListing[],
  tenantId: string,
  conversionId: string,
): Promise<ConversionDelivery[]> {
  const all: ConversionDelivery[] = [];
  for (const listing of listings) {
    all.push(...(await listing.deliveriesOf(db, tenantId, conversionId, DELIVERIES_PER_DESTINATION)));
  }
  return all.sort((a, b) => a.createdAt.localeCompare(b.createdAt) || a.id.localeCompare(b.id));
}

/** A row of a listing's statement, in the columns every destination's statement answers. */
export interface DeliveryRow {
  id: string;
  target_id: string;
  target_name: string | null;
  status: string;
  conversion_status: string | null;
  attempts: number;
  last_attempt_at: Date | null;
  created_at: Date;
}

/** A listing from one statement answering DeliveryRow's columns for ($1 tenant, $2 conversion, $3 limit). */
export function sqlListing(kind: DestinationKind, sql: string): DeliveryListing {
  return {
    kind,
    async deliveriesOf(db, tenantId, conversionId, limit) {
      const rows = await db.query<DeliveryRow>(sql, [tenantId, conversionId, limit]);
      return rows.map((row) => ({
        destination: kind,
        target: { id: String(row.target_id), name: row.target_name },
        id: row.id,
        status: row.status,
        conversionStatus: row.conversion_status,
        attempts: Number(row.attempts),
        lastAttemptAt: row.last_attempt_at === null ? null : new Date(row.last_attempt_at).toISOString(),
        createdAt: new Date(row.created_at).toISOString(),
      }));
    },
  };
}
