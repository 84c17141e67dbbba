import { hash } from "node:crypto";
import type { Clock } from "../../platform/clock.js";
import type { Queryable } from "../../platform/db/index.js";
import { apiKeyPermissions } from "./permissions.js";
import type { ApiKeyPrincipal, TenantEntitlements } from "./principal.js";

interface TokenRow {
  id: string;
  tenant_id: string;
  name: string;
  scopes: string[];
  legacy: boolean;
  expiration_date: Date;
  entitlements: TenantEntitlements;
}

interface CacheEntry {
  principal: ApiKeyPrincipal;
  cachedUntil: number;
}

const MAX_ENTRIES = 10_000;

/** SHA-256 hex of the raw key, as stored in api_tokens.token_hash; one-shot, no Hash object. */
function keyHash(rawKey: string): string {
  return hash("sha256", rawKey, "hex");
}

/**
 * Verifies `ApiKey` credentials by the SHA-256 of the raw key. Valid keys are cached for
 * `ttlMs`, so a revoked key can work on another node for up to that long (the fallback when it
 * misses the revocation broadcast; docs/auth-and-tokens.md);
 * expiry is checked on every call, cached or not.
 */
export class ApiKeyVerifier {
  readonly #cache = new Map<string, CacheEntry>();
  /** Keys looked up in the database (unknown ones included). */
  lookups = 0;

  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
    private readonly ttlMs: number,
  ) {}

  /**
   * The principal of a key that is cached, within its TTL and not expired, decided without a
   * promise; undefined whenever `verify` has to decide (not cached, stale or expired).
   */
  cached(rawKey: string): ApiKeyPrincipal | undefined {
    const entry = this.#cache.get(keyHash(rawKey));
    if (entry === undefined) return undefined;
    const now = this.clock.now().getTime();
    return entry.cachedUntil > now && entry.principal.expiresAt.getTime() > now ? entry.principal : undefined;
  }

  async verify(rawKey: string): Promise<ApiKeyPrincipal | null> {
    const hash = keyHash(rawKey);
    const now = this.clock.now();
    const cached = this.#cache.get(hash);
    if (cached && cached.cachedUntil > now.getTime()) {
      return cached.principal.expiresAt > now ? cached.principal : null;
    }
    this.#cache.delete(hash);
    this.lookups += 1;
    const [row] = await this.db.query<TokenRow>(
      `select k.id, k.tenant_id, k.name, k.scopes, k.legacy, k.expiration_date, t.entitlements
         from api_tokens k join tenants t on t.id = k.tenant_id
        where k.token_hash = $1`,
      [hash],
    );
    if (!row) return null;
    const principal: ApiKeyPrincipal = {
      kind: "apiKey",
      tenantId: row.tenant_id,
      tokenId: row.id,
      name: row.name,
      scopes: row.scopes,
      legacy: row.legacy,
      expiresAt: new Date(row.expiration_date),
      entitlements: row.entitlements,
      permissions: apiKeyPermissions(row.scopes),
    };
    if (principal.expiresAt <= now) return null;
    if (this.ttlMs > 0) {
      if (this.#cache.size >= MAX_ENTRIES) {
        const oldest = this.#cache.keys().next().value;
        if (oldest !== undefined) this.#cache.delete(oldest);
      }
      this.#cache.set(hash, { principal, cachedUntil: now.getTime() + this.ttlMs });
    }
    return principal;
  }

  /** Drops every cached entry of a key, so this node refuses it at once. */
  forget(tokenId: string): void {
    for (const [hash, entry] of this.#cache) {
      if (entry.principal.tokenId === tokenId) this.#cache.delete(hash);
    }
  }

  /** Drops every cached key of a tenant (its entitlements changed). */
  forgetTenant(tenantId: string): void {
    for (const [hash, entry] of this.#cache) {
      if (entry.principal.tenantId === tenantId) this.#cache.delete(hash);
    }
  }
}
