import { createHash } from "node:crypto";

/** Bytes of tokens (and their keys) held at most; past it the oldest entries are dropped. */
const MAX_BYTES = 1024 * 1024;
/** Each entry's own cost beside its strings (the map slot, the object, the dates). */
const ENTRY_OVERHEAD_BYTES = 200;
/** A token is used until this long before Google says it expires (it lives an hour). */
const MARGIN_MS = 5 * 60_000;

interface Entry {
  /** Tells stored credentials apart: saving new ones (a new seal) misses the old token. */
  sealHash: string;
  token: string;
  expiresAt: number;
  bytes: number;
}

/**
 * Access tokens of this node, per integration, so a busy integration does not ask Google for a
 * new token every round. In memory only and byte-bounded; real time (tokens expire in real
 * time, whatever instant a manual job run passes).
 */
export class TokenCache {
  readonly #entries = new Map<string, Entry>();
  #bytes = 0;

  constructor(private readonly now: () => number = Date.now) {}

  static sealHash(sealed: string): string {
    return createHash("sha256").update(sealed).digest("base64url");
  }

  get(integrationId: string, sealHash: string): string | null {
    const entry = this.#entries.get(integrationId);
    if (!entry) return null;
    if (entry.sealHash !== sealHash || entry.expiresAt <= this.now()) {
      this.forget(integrationId);
      return null;
    }
    return entry.token;
  }

  set(integrationId: string, sealHash: string, token: string, expiresInS: number): void {
    this.forget(integrationId);
    const expiresAt = this.now() + expiresInS * 1000 - MARGIN_MS;
    if (expiresAt <= this.now()) return;
    const bytes = 2 * (integrationId.length + sealHash.length + token.length) + ENTRY_OVERHEAD_BYTES;
    if (bytes > MAX_BYTES) return;
    while (this.#bytes + bytes > MAX_BYTES) {
      const oldest = this.#entries.keys().next().value;
      if (oldest === undefined) break;
      this.forget(oldest);
    }
    this.#entries.set(integrationId, { sealHash, token, expiresAt, bytes });
    this.#bytes += bytes;
  }

  /** Drops the integration's token (Google refused it, or it is stale). */
  forget(integrationId: string): void {
    const entry = this.#entries.get(integrationId);
    if (!entry) return;
    this.#entries.delete(integrationId);
    this.#bytes -= entry.bytes;
  }
}
