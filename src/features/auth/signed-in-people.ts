import { hash } from "node:crypto";
import { Counter, Gauge, type Registry } from "prom-client";
import type { Clock } from "../../platform/clock.js";
import type { Queryable } from "../../platform/db/index.js";
import { loadUserPrincipal } from "./authenticate.js";
import type { JwtSigner, VerifiedSession } from "./jwt.js";
import type { UserPrincipal } from "./principal.js";
import { broadcastRevoked } from "./revocations.js";

/** What one cached token costs in memory, beyond its strings: the entry, the map slot, the claims object. */
const TOKEN_OVERHEAD_BYTES = 200;
/** The same for a person: the principal and its permission set, whose members are shared constants. */
const PERSON_OVERHEAD_BYTES = 400;
/** A signed-out token: the entry and its map slot. */
const REVOKED_OVERHEAD_BYTES = 100;
const PERMISSION_BYTES = 40;

/** The default bound: about 6,000 people with a token each (a large dashboard audience) in 4 MiB. */
export const DEFAULT_SIGNED_IN_MAX_BYTES = 4 * 1024 * 1024;

type Entry =
  | { kind: "token"; session: VerifiedSession; bytes: number }
  // A signed-out token, remembered until it expires: refused without asking the database again.
  | { kind: "revoked"; expiresAtS: number; bytes: number }
  | { kind: "person"; principal: UserPrincipal; cachedUntil: number; bytes: number };

export interface SignedInOptions {
  /** How long a person is trusted without a lookup when no broadcast says otherwise (API_KEY_CACHE_TTL_S); 0: never cached. */
  ttlMs: number;
  /** The most estimated bytes the cache holds; the oldest entries go first beyond it. */
  maxBytes?: number;
}

/** A token's id where one is stored or broadcast (revoked_sessions): the SHA-256 of the token, never the token. */
const sessionIdOf = (token: string) => hash("sha256", token, "hex");
const tokenKey = (token: string) => `t:${sessionIdOf(token)}`;
const personKey = (userId: string) => `p:${userId}`;

/**
 * Bearer requests cost what API-key requests cost: a token's verified claims (until its `exp`)
 * and the signed-in person (for `ttlMs`, as API keys are) are kept in memory, so a dashboard
 * call needs neither the HMAC nor the person lookup. A person disabled, their permissions or
 * their tenant's entitlements changed are forgotten at once on the node that changes them and,
 * through the auth_cache broadcast (revocations.ts), on every other node; the TTL is only the
 * fallback if a node misses the broadcast. Only the SHA-256 of a token is held, as for keys.
 *
 * Bounded by estimated bytes; the oldest entries are evicted first.
 */
export class SignedInPeople {
  readonly #entries = new Map<string, Entry>();
  readonly #maxBytes: number;
  readonly #ttlMs: number;
  #bytes = 0;
  #evicted = 0;
  // Bumped by every forget: a lookup that started before one must not cache what it read.
  #generation = 0;
  // The same for sign-outs and the tokens verified while one was heard.
  #revocations = 0;

  constructor(
    private readonly db: Queryable,
    private readonly clock: Clock,
    private readonly jwt: JwtSigner,
    options: SignedInOptions,
  ) {
    this.#ttlMs = options.ttlMs;
    this.#maxBytes = options.maxBytes ?? DEFAULT_SIGNED_IN_MAX_BYTES;
  }

  /** The estimated bytes held. */
  get bytes(): number {
    return this.#bytes;
  }

  /**
   * The person of a token whose claims and person are both cached and valid right now, decided
   * without a promise; undefined whenever `resolve` has to decide.
   */
  cached(token: string): UserPrincipal | undefined {
    const now = this.clock.now().getTime();
    const session = this.#session(tokenKey(token), now);
    if (session === undefined) return undefined;
    const person = this.#entries.get(personKey(session.userId));
    if (person?.kind !== "person" || person.cachedUntil <= now) return undefined;
    return person.principal.tenantId === session.tenantId ? person.principal : undefined;
  }

  /**
   * A token's claims, verified (and cached until it expires); null for a token that is not valid
   * or was signed out. Whether it was signed out is read once per node (revoked_sessions), when
   * the token is first verified here; later sign-outs reach the cache through `forgetSession`.
   */
  async verify(token: string): Promise<VerifiedSession | null> {
    const key = tokenKey(token);
    const now = this.clock.now();
    const cached = this.#session(key, now.getTime());
    if (cached !== undefined) return cached;
    if (this.#entries.get(key)?.kind === "revoked") return null;
    const session = await this.jwt.verify(token, now);
    if (session === null) return null;
    const revocations = this.#revocations;
    const [revoked] = await this.db.query("select 1 from revoked_sessions where token_hash = $1", [sessionIdOf(token)]);
    if (revoked !== undefined) {
      this.#remember(key, session.expiresAtS);
      return null;
    }
    // A sign-out heard while the lookup ran may be this token's: answer it, but do not keep it.
    if (revocations !== this.#revocations) return session;
    this.#put(key, {
      kind: "token",
      session,
      bytes: TOKEN_OVERHEAD_BYTES + key.length + session.userId.length + session.tenantId.length,
    });
    return session;
  }

  /** The enabled person of that id (cached for the TTL), or null when disabled or gone. */
  async person(userId: string): Promise<UserPrincipal | null> {
    const key = personKey(userId);
    const now = this.clock.now().getTime();
    const cached = this.#entries.get(key);
    if (cached?.kind === "person" && cached.cachedUntil > now) return cached.principal;
    const generation = this.#generation;
    const principal = await loadUserPrincipal(this.db, userId);
    // A forget while the lookup ran may concern what it read: answer it, but do not keep it.
    if (principal !== null && this.#ttlMs > 0 && generation === this.#generation) {
      this.#put(key, {
        kind: "person",
        principal,
        cachedUntil: now + this.#ttlMs,
        bytes:
          PERSON_OVERHEAD_BYTES +
          key.length +
          2 * (principal.tenantId.length + principal.email.length + principal.name.length) +
          PERMISSION_BYTES * principal.permissions.size,
      });
    }
    return principal;
  }

  /**
   * Signs a token out on every node: stored (until the token would have expired) and broadcast in
   * one transaction, so another node, or one started later, refuses it too; refused here at once.
   */
  async revoke(
    token: string,
    session: VerifiedSession,
    transaction: (work: (tx: Queryable) => Promise<void>) => Promise<void>,
    now: Date,
  ): Promise<void> {
    const id = sessionIdOf(token);
    await transaction(async (tx) => {
      await tx.query(
        `insert into revoked_sessions (token_hash, tenant_id, user_id, expires_at, revoked_at)
         values ($1, $2, $3, $4, $5) on conflict (token_hash) do nothing`,
        [id, session.tenantId, session.userId, new Date(session.expiresAtS * 1000), now],
      );
      await broadcastRevoked(tx, { sessionId: id });
    });
    this.forgetSession(id, session.expiresAtS);
  }

  /**
   * A token signed out (by its SHA-256, as broadcast): refused by this node from now on. When its
   * expiry is known it is remembered as refused; otherwise its entry is dropped, and the next
   * verification reads revoked_sessions.
   */
  forgetSession(sessionId: string, expiresAtS?: number): void {
    this.#revocations++;
    const key = `t:${sessionId}`;
    const entry = this.#entries.get(key);
    // The broadcast also reaches the node that signed the token out, which already remembers it.
    const known =
      entry?.kind === "token" ? entry.session.expiresAtS : entry?.kind === "revoked" ? entry.expiresAtS : undefined;
    const expiry = expiresAtS ?? known;
    this.#drop(key);
    if (expiry !== undefined) this.#remember(key, expiry);
  }

  /** Drops a person, so this node looks them up again on their next request. */
  forget(userId: string): void {
    this.#generation++;
    this.#drop(personKey(userId));
  }

  /** Drops every person of a tenant (its entitlements changed). */
  forgetTenant(tenantId: string): void {
    this.#generation++;
    for (const [key, entry] of this.#entries) {
      if (entry.kind === "person" && entry.principal.tenantId === tenantId) this.#drop(key);
    }
  }

  registerMetrics(registry: Registry): void {
    const read = { bytes: () => this.bytes, entries: () => this.#entries.size, evicted: () => this.#evicted };
    new Gauge({
      name: "auth_signed_in_cache_bytes",
      help: "Estimated bytes of verified bearer tokens and signed-in people held in memory",
      registers: [registry],
      collect() {
        this.set(read.bytes());
      },
    });
    new Gauge({
      name: "auth_signed_in_cache_entries",
      help: "Verified bearer tokens and signed-in people held in memory",
      registers: [registry],
      collect() {
        this.set(read.entries());
      },
    });
    new Counter({
      name: "auth_signed_in_cache_evictions_total",
      help: "Entries dropped to keep the signed-in cache within its byte bound",
      registers: [registry],
      collect() {
        this.reset();
        this.inc(read.evicted());
      },
    });
  }

  #remember(key: string, expiresAtS: number): void {
    this.#put(key, { kind: "revoked", expiresAtS, bytes: REVOKED_OVERHEAD_BYTES + key.length });
  }

  #session(key: string, nowMs: number): VerifiedSession | undefined {
    const entry = this.#entries.get(key);
    if (entry?.kind === "revoked" && entry.expiresAtS <= Math.floor(nowMs / 1000)) this.#drop(key);
    if (entry?.kind !== "token") return undefined;
    // As jose decides: valid while `exp` is after the current whole second.
    if (entry.session.expiresAtS > Math.floor(nowMs / 1000)) return entry.session;
    this.#drop(key);
    return undefined;
  }

  #put(key: string, entry: Entry): void {
    if (entry.bytes > this.#maxBytes) return;
    this.#drop(key);
    while (this.#bytes + entry.bytes > this.#maxBytes) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.#drop(oldest);
      this.#evicted++;
    }
    this.#entries.set(key, entry);
    this.#bytes += entry.bytes;
  }

  #drop(key: string): void {
    const entry = this.#entries.get(key);
    if (entry === undefined) return;
    this.#entries.delete(key);
    this.#bytes -= entry.bytes;
  }
}
