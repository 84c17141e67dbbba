import type { Db, Queryable } from "../../platform/db/index.js";
import { idTime, newId } from "../../platform/ids.js";

export interface PageViewRecord {
  url: string;
  title: string | null;
  referrer: string | null;
  at: string;
}

type PageViewOutcome = { id: string } | "unknown_click" | "limit_reached";

/**
 * Records a page view against its click, unless the click is unknown to every tenant or
 * already has `maxPerClick` views (a script replaying one click id must not grow the table
 * without bound). The click's row is locked first and the views counted by a later statement
 * (a fresh snapshot), so concurrent views of one click never pass the cap together.
 */
export async function recordPageView(
  db: Db,
  view: { clickId: string; url: string; title: string | null; referrer: string | null },
  at: Date,
  maxPerClick: number,
): Promise<PageViewOutcome> {
  const id = newId("pv");
  return db.transaction(async (tx) => {
    // The click names the tenant.
    const [click] = await tx.query<{ tenant_id: string }>("select tenant_id from clicks where id = $1 for update", [
      view.clickId,
    ]);
    if (!click) return "unknown_click";
    const rows = await tx.query<{ id: string }>(
      `insert into page_views (id, tenant_id, click_id, url, title, referrer, at)
       select $1, $2, $3, $4, $5, $6, $7
        where (select count(*) from (select 1 from page_views where click_id = $3 limit $8) seen) < $8
       returning id`,
      [id, click.tenant_id, view.clickId, view.url, view.title, view.referrer, at, maxPerClick],
    );
    return rows[0] ? { id: rows[0].id } : "limit_reached";
  });
}

const WAIT_STEP_MS = 50;

/**
 * Waits, at most `waitMs` after the click id says it was made, for a click another node may
 * still hold in its buffer. An id that does not look like a click made within `waitMs` (a
 * made-up one, an old one) does not wait at all: a forged id cannot hold the request longer
 * than `waitMs`, and with 0 (the embedded database, a single node) it never waits.
 */
export async function waitForRecentClick(db: Queryable, clickId: string, waitMs: number): Promise<void> {
  if (waitMs <= 0 || !clickId.startsWith("clk_")) return;
  const made = idTime(clickId)?.getTime();
  if (made === undefined) return;
  const now = Date.now();
  // A click dated ahead of this node's clock (skew) waits no longer than a fresh one.
  const deadline = Math.min(made, now) + waitMs;
  while (Date.now() < deadline) {
    const found = await db.query("select 1 from clicks where id = $1", [clickId]);
    if (found.length > 0) return;
    await new Promise((resolve) => setTimeout(resolve, Math.min(WAIT_STEP_MS, Math.max(1, deadline - Date.now()))));
  }
}

/** The click's page views up to `until`, oldest first: the ones that led to a conversion. */
export async function pageViewsFor(
  db: Queryable,
  tenantId: string,
  clickId: string,
  until: Date,
): Promise<PageViewRecord[]> {
  const rows = await db.query<{ url: string; title: string | null; referrer: string | null; at: Date }>(
    `select url, title, referrer, at from page_views
      where click_id = $1 and tenant_id = $2 and at <= $3 order by at, id limit 500`,
    [clickId, tenantId, until],
  );
  return rows.map((row) => ({ ...row, at: new Date(row.at).toISOString() }));
}
