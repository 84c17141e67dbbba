import type { Queryable } from "../../platform/db/index.js";
import type { ConversionStatus, StatusChange, StatusChangeHook } from "../tracking/index.js";
import { isCounted } from "../tracking/index.js";
import { CLICK_WINDOW_MS } from "./events.js";
import { queueGoogleAdsItems } from "./hook.js";

/**
 * What Google Ads is told of a conversion's change of status (docs/google-ads.md "Conversion
 * statuses"). Google gets pending and approved conversions. One rejected or reversed before its
 * upload is withdrawn from the queue and never sent; approved again, it is queued again while
 * its click is inside the 90 days. One rejected or reversed after Google accepted it cannot be
 * taken back through the Data Manager API: its adjustments restate a value or add user data,
 * none retracts a conversion (that is the Google Ads API's ConversionAdjustmentUploadService,
 * adjustment type RETRACTION). The upload history says so on the item (`statusNote`).
 */

const WORD: Record<ConversionStatus, string> = {
  pending: "Set back to pending",
  approved: "Approved",
  rejected: "Rejected",
  reversed: "Reversed",
};

const day = (at: Date) => at.toISOString().slice(0, 10);
const why = (reason: string | null) => (reason === null || reason.trim() === "" ? "" : ` (${reason.trim()})`);

/** The reason of an item withdrawn before its upload. */
const withdrawnReason = (status: ConversionStatus, at: Date, reason: string | null, retry: boolean): string =>
  `${WORD[status]} on ${day(at)} before its upload${why(reason)}: ${retry ? "not sent again" : "not sent"}`;

/** The note of an item Google accepted whose conversion was then rejected or reversed. */
export const notToldNote = (status: ConversionStatus, at: Date, reason: string | null): string =>
  `${WORD[status]} on ${day(at)}${why(reason)}: Google was not told; the Data Manager API takes no retractions. ` +
  "Retract it in Google Ads (an adjustment of type RETRACTION)";

/** The note of an item Google accepted whose conversion was rejected or reversed, then counted again. */
const backAgainNote = (status: ConversionStatus, at: Date, reason: string | null): string =>
  `${WORD[status]} again on ${day(at)}${why(reason)}: Google was not told of this change or the one before; ` +
  "it still counts the conversion unless it was retracted in Google Ads";

interface ItemState {
  conversion_id: string;
  upload_id: string | null;
  outcome: "pending" | "accepted" | "refused" | "withdrawn";
  reason: string | null;
  status_note: string | null;
  click_at: Date;
}

interface ItemWrite {
  conversionId: string;
  outcome: ItemState["outcome"];
  reason: string | null;
  note: string | null;
  /** Taken out of the upload that held it (queued again). */
  detach: boolean;
}

const WRITE_ITEMS = `update google_ads_items q set outcome = v.outcome, reason = v.reason, status_note = v.note,
       upload_id = case when v.detach then null else q.upload_id end
  from unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::boolean[]) as v (conversion_id, outcome, reason, note, detach)
 where q.tenant_id = $1 and q.conversion_id = v.conversion_id`;

/**
 * Each conversion's net change in the batch (a conversion may change twice in one): from its
 * status before the first change to the last, when that moves it into or out of the statuses
 * Google is sent (pending, approved). Only conversions whose click carried a gclid can have an item.
 */
function netChanges(changes: readonly StatusChange[]): Map<string, { from: ConversionStatus; last: StatusChange }> {
  const net = new Map<string, { from: ConversionStatus; last: StatusChange }>();
  for (const change of changes) {
    if (change.conversion.attributionSource !== "google") continue;
    const seen = net.get(change.conversion.id);
    net.set(change.conversion.id, { from: seen?.from ?? change.previousStatus, last: change });
  }
  for (const [id, { from, last }] of net) {
    if (isCounted(from) === isCounted(last.conversion.status)) net.delete(id);
  }
  return net;
}

/** What becomes of one item; null: nothing. */
function writeOf(item: ItemState, change: StatusChange, now: Date): ItemWrite | null {
  const { status } = change.conversion;
  const keep = { conversionId: item.conversion_id, reason: item.reason, note: item.status_note, detach: false };
  if (!isCounted(status)) {
    if (item.outcome === "pending") {
      // Still queued, or waiting in a failed upload for its retry: never sent (again).
      const reason = withdrawnReason(status, change.at, change.reason, item.upload_id !== null);
      return { ...keep, outcome: "withdrawn", reason };
    }
    if (item.outcome === "accepted") {
      return { ...keep, outcome: "accepted", note: notToldNote(status, change.at, change.reason) };
    }
    // Refused: Google never had it. Withdrawn: already out.
    return null;
  }
  if (item.outcome === "withdrawn") {
    if (now.getTime() - new Date(item.click_at).getTime() <= CLICK_WINDOW_MS) {
      return { ...keep, outcome: "pending", reason: null, note: null, detach: item.upload_id !== null };
    }
    const reason = `${WORD[status]} on ${day(change.at)}, after its withdrawal; not queued again: its click is older than Google's conversion window (90 days)`;
    return { ...keep, outcome: "withdrawn", reason };
  }
  if (item.outcome === "accepted" && item.status_note !== null) {
    return { ...keep, outcome: "accepted", note: backAgainNote(status, change.at, change.reason) };
  }
  return null;
}

/**
 * The status hook app.ts registers: in the transaction that changes the statuses, withdraws the
 * queued items of conversions rejected or reversed, notes on the accepted ones that Google was not
 * told, and queues again (or for the first time) those approved or set back to pending.
 */
export const googleAdsStatusHook: StatusChangeHook = async (tx, tenantId, changes, now) => {
  const net = netChanges(changes);
  if (net.size === 0) return;
  // Locked, in one order: the uploader locks an attempt's items the same way before writing
  // what Google said, so a change and an upload never cross unseen.
  const items = await tx.query<ItemState>(
    `select conversion_id, upload_id, outcome, reason, status_note, click_at from google_ads_items
      where tenant_id = $1 and conversion_id = any($2::text[]) order by conversion_id for update`,
    [tenantId, [...net.keys()]],
  );
  const writes: ItemWrite[] = [];
  const detachedFrom = new Set<string>();
  for (const item of items) {
    const change = net.get(item.conversion_id);
    if (!change) continue;
    const write = writeOf(item, change.last, now);
    if (write === null) continue;
    writes.push(write);
    if (write.detach && item.upload_id !== null) detachedFrom.add(item.upload_id);
  }
  await writeItems(tx, tenantId, writes);
  if (detachedFrom.size > 0) {
    await tx.query(
      `update google_ads_uploads u set events = (select count(*)::int from google_ads_items q where q.upload_id = u.id)
        where u.tenant_id = $1 and u.id = any($2::text[])`,
      [tenantId, [...detachedFrom]],
    );
  }
  // Never queued: recorded rejected or reversed, now counted. Queued as at its recording.
  const had = new Set(items.map((item) => item.conversion_id));
  const fresh = [...net.values()]
    .filter(({ last }) => isCounted(last.conversion.status) && !had.has(last.conversion.id))
    .map(({ last }) => last.conversion);
  if (fresh.length > 0) await queueGoogleAdsItems(tx, tenantId, fresh, now);
};

async function writeItems(tx: Queryable, tenantId: string, writes: readonly ItemWrite[]): Promise<void> {
  if (writes.length === 0) return;
  await tx.query(WRITE_ITEMS, [
    tenantId,
    writes.map((w) => w.conversionId),
    writes.map((w) => w.outcome),
    writes.map((w) => w.reason),
    writes.map((w) => w.note),
    writes.map((w) => w.detach),
  ]);
}
