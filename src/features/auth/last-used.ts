import type { Db } from "../../platform/db/index.js";

interface Use {
  at: Date;
  ip: string;
}

export const LAST_USED_FLUSH_MS = 60_000;

/**
 * Keeps each key's latest use in memory and writes them all in one statement per minute (and
 * on shutdown), so a busy key costs one write a minute, not one per request.
 */
export class LastUsedRecorder {
  readonly #pending = new Map<string, Use>();
  #timer: NodeJS.Timeout | undefined;

  constructor(private readonly db: Db) {}

  touch(tokenId: string, ip: string, at: Date): void {
    // Called on every API-key request: update the pending entry in place rather than allocate.
    const use = this.#pending.get(tokenId);
    if (use === undefined) {
      this.#pending.set(tokenId, { at, ip });
    } else {
      use.at = at;
      use.ip = ip;
    }
  }

  start(): void {
    this.#timer ??= setInterval(() => void this.flush().catch(() => undefined), LAST_USED_FLUSH_MS);
    this.#timer.unref();
  }

  async stop(): Promise<void> {
    clearInterval(this.#timer);
    this.#timer = undefined;
    await this.flush();
  }

  /** Writes every pending use; returns how many keys were written. */
  async flush(): Promise<number> {
    if (this.#pending.size === 0 || this.db.closed) return 0;
    const batch = [...this.#pending];
    this.#pending.clear();
    await this.db.query(
      `update api_tokens t set last_used_at = u.at, last_used_ip = u.ip
         from (select unnest($1::text[]) as id, unnest($2::timestamptz[]) as at, unnest($3::text[]) as ip) u
        where t.id = u.id and (t.last_used_at is null or t.last_used_at < u.at)`,
      [batch.map(([id]) => id), batch.map(([, use]) => use.at), batch.map(([, use]) => use.ip)],
    );
    return batch.length;
  }
}
