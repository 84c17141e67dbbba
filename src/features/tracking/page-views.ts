import type { Queryable } from "../../platform/db/index.js";
import { newId } from "../../platform/ids.js";

export interface PageViewRecord {
  url: string;
  title: string | null;
  referrer: string | null;
  at: string;
}

/** Records a page view against its click; false when no tenant has that click. */
export async function recordPageView(
  db: Queryable,
  view: { clickId: string; url: string; title: string | null; referrer: string | null },
  at: Date,
): Promise<string | null> {
  const id = newId("pv");
  // The click names the tenant: one statement that writes nothing when the click is unknown.
  const rows = await db.query<{ id: string }>(
    `insert into page_views (id, tenant_id, click_id, url, title, referrer, at)
     select $1, c.tenant_id, c.id, $3, $4, $5, $6 from clicks c where c.id = $2
     returning id`,
    [id, view.clickId, view.url, view.title, view.referrer, at],
  );
  return rows[0]?.id ?? null;
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
