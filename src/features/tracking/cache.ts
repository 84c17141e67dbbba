import type { Db } from "../../platform/db/index.js";

/** What a click needs to know about its brand link, denormalized so the click route reads no table. */
export interface CachedLink {
  tenantId: string;
  linkId: number;
  accountId: number;
  brandId: number;
  programId: number;
  url: string;
}

/** A traffic source as a click needs it: its tenant, and the parameter carrying its own click id. */
interface CachedSource {
  tenantId: string;
  clickIdParam: string | null;
}

/** What the click route learns about a link and a source, from the cache or the database. */
export interface Found {
  link: CachedLink | null;
  sourceTenant: string | null;
  /** The source's click-id parameter (docs/traffic-source-postbacks.md), null for none. */
  clickIdParam: string | null;
}

interface Entry<T> {
  value: T | null;
  expiresAt: number;
}

// Entries are dropped the moment any node changes the tenant's catalog; the TTL only bounds
// how long a missed notification (a dropped connection) could keep a stale entry.
const FOUND_TTL_MS = 5 * 60_000;
// Unknown ids are remembered briefly so a scan of random ids cannot turn into database load.
const MISSING_TTL_MS = 10_000;
const MAX_ENTRIES = 200_000;

/**
 * Hears of every change of a tenant's catalog on any node: the catalog's listenForCatalogChanges,
 * handed over by app.ts (the catalog reads tracking's vocabulary, so tracking does not import it).
 */
export type CatalogListener = (db: Db, onChange: (tenantId: string) => void) => Promise<() => Promise<void>>;

/**
 * The click route's view of the catalog: brand links and traffic sources by id, loaded on first
 * use and refreshed whenever the tenant's catalog changes on any node.
 */
export class TrackingCache {
  private readonly links = new Map<number, Entry<CachedLink>>();
  private readonly sources = new Map<number, Entry<CachedSource>>();
  private stopListening: (() => Promise<void>) | null = null;
  // Bumped by every change, so a load that raced a change does not cache what it read before it.
  private generation = 0;

  constructor(
    private readonly db: Db,
    private readonly listen: CatalogListener,
  ) {}

  async start(): Promise<void> {
    this.stopListening = await this.listen(this.db, (tenantId) => this.forgetTenant(tenantId));
  }

  async stop(): Promise<void> {
    await this.stopListening?.().catch(() => undefined);
    this.stopListening = null;
  }

  /** The link and the source's tenant when both are cached; undefined when either must be loaded. */
  peek(linkId: number, sourceId: number, now: number): Found | undefined {
    const link = this.links.get(linkId);
    const source = this.sources.get(sourceId);
    if (!link || !source || link.expiresAt < now || source.expiresAt < now) return undefined;
    return {
      link: link.value,
      sourceTenant: source.value?.tenantId ?? null,
      clickIdParam: source.value?.clickIdParam ?? null,
    };
  }

  async load(linkId: number, sourceId: number, now: number): Promise<Found> {
    const generation = this.generation;
    const [links, sources] = await Promise.all([
      this.db.query<{ tenant_id: string; account_id: string; brand_id: string; program_id: string; url: string }>(
        `select l.tenant_id, l.account_id, l.brand_id, a.program_id, l.url
           from links l join accounts a on a.id = l.account_id where l.id = $1`,
        [linkId],
      ),
      this.db.query<{ tenant_id: string; click_id_param: string | null }>(
        "select tenant_id, click_id_param from traffic_sources where id = $1",
        [sourceId],
      ),
    ]);
    const row = links[0];
    const link: CachedLink | null = row
      ? {
          tenantId: row.tenant_id,
          linkId,
          accountId: Number(row.account_id),
          brandId: Number(row.brand_id),
          programId: Number(row.program_id),
          url: row.url,
        }
      : null;
    const sourceTenant = sources[0]?.tenant_id ?? null;
    const clickIdParam = sources[0]?.click_id_param ?? null;
    if (generation !== this.generation) return { link, sourceTenant, clickIdParam };
    if (this.links.size + this.sources.size > MAX_ENTRIES) this.clear();
    this.links.set(linkId, { value: link, expiresAt: now + (link ? FOUND_TTL_MS : MISSING_TTL_MS) });
    // A source's parameter name is at most 64 characters: entries stay bounded by their count.
    this.sources.set(sourceId, {
      value: sourceTenant === null ? null : { tenantId: sourceTenant, clickIdParam },
      expiresAt: now + (sourceTenant ? FOUND_TTL_MS : MISSING_TTL_MS),
    });
    return { link, sourceTenant, clickIdParam };
  }

  /** Drops the tenant's entries and every "not found", which the change may have made wrong. */
  forgetTenant(tenantId: string): void {
    this.generation += 1;
    for (const [id, entry] of this.links)
      if (entry.value === null || entry.value.tenantId === tenantId) this.links.delete(id);
    for (const [id, entry] of this.sources)
      if (entry.value === null || entry.value.tenantId === tenantId) this.sources.delete(id);
  }

  clear(): void {
    this.links.clear();
    this.sources.clear();
  }
}
