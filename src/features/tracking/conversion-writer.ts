import type { Db } from "../../platform/db/index.js";
import type { ValidConversion } from "./conversion-input.js";
import { type RecordedConversion, type RecordingHooks, recordConversions } from "./conversion-service.js";
import { POSTBACK_ORIGIN, type StatusOrigin } from "./conversion-status.js";

/** Transactions of conversions under way at once on a node, over all tenants (the pool is shared). */
export const CONVERSION_WRITERS = 4;
/** Items one transaction takes at most; a request (at most 1,000 items) is never split. */
export const CONVERSION_ITEMS_PER_TRANSACTION = 2_000;

interface Request {
  items: ValidConversion[];
  origin: StatusOrigin;
  resolve: (recorded: RecordedConversion[]) => void;
  reject: (error: unknown) => void;
}

/**
 * Writes the conversions of concurrent requests as group commits. A busy link's conversions all
 * update one rollup row, whose lock each transaction holds until its commit (a WAL flush of a few
 * ms): one transaction per request would bound a link's intake by the commit time, whatever the
 * machine. Here each tenant has one transaction under way at a time; the requests that arrive
 * meanwhile wait for it and go together in the next one (up to CONVERSION_ITEMS_PER_TRANSACTION
 * items), so a tenant's intake grows with its load instead of queueing on the row, and a single
 * request on an idle tenant starts at once. Every request is still answered only after the
 * commit that holds its conversions, so nothing answered is lost; items of a later request that
 * repeat an externalId of an earlier one in the same transaction are its duplicates, as they would
 * be one transaction later. When a shared transaction fails, each of its requests is retried alone,
 * so one request's failure is never another's. Tenants take turns for the writers in arrival order.
 */
export class ConversionWriter {
  private readonly pending = new Map<string, Request[]>();
  /** Tenants with requests waiting and no transaction under way, in the order they became ready. */
  private readonly ready: string[] = [];
  private readonly writing = new Set<string>();

  constructor(
    private readonly db: Db,
    private readonly hooks: RecordingHooks,
    private readonly now: () => Date,
  ) {}

  record(
    tenantId: string,
    items: ValidConversion[],
    origin: StatusOrigin = POSTBACK_ORIGIN,
  ): Promise<RecordedConversion[]> {
    return new Promise((resolve, reject) => {
      const queue = this.pending.get(tenantId);
      if (queue) queue.push({ items, origin, resolve, reject });
      else {
        this.pending.set(tenantId, [{ items, origin, resolve, reject }]);
        if (!this.writing.has(tenantId)) this.ready.push(tenantId);
      }
      this.pump();
    });
  }

  private pump(): void {
    while (this.writing.size < CONVERSION_WRITERS && this.ready.length > 0) {
      const tenantId = this.ready.shift() as string;
      this.writing.add(tenantId);
      void this.writeNext(tenantId).finally(() => {
        this.writing.delete(tenantId);
        if (this.pending.has(tenantId)) this.ready.push(tenantId);
        this.pump();
      });
    }
  }

  /** Takes the tenant's waiting requests, up to the item bound (at least one), and writes them. */
  private async writeNext(tenantId: string): Promise<void> {
    const queue = this.pending.get(tenantId) ?? [];
    let items = 0;
    let take = 0;
    while (take < queue.length) {
      const size = queue[take]?.items.length ?? 0;
      if (take > 0 && items + size > CONVERSION_ITEMS_PER_TRANSACTION) break;
      items += size;
      take += 1;
    }
    const group = queue.splice(0, take);
    if (queue.length === 0) this.pending.delete(tenantId);
    try {
      const recorded = await this.write(
        tenantId,
        group.flatMap((r) => r.items),
        group.flatMap((r) => r.items.map(() => r.origin)),
      );
      let offset = 0;
      for (const request of group) {
        request.resolve(recorded.slice(offset, offset + request.items.length));
        offset += request.items.length;
      }
    } catch (error) {
      if (group.length === 1) {
        group[0]?.reject(error);
        return;
      }
      for (const request of group) {
        await this.write(
          tenantId,
          request.items,
          request.items.map(() => request.origin),
        ).then(request.resolve, request.reject);
      }
    }
  }

  private write(tenantId: string, items: ValidConversion[], origins: StatusOrigin[]): Promise<RecordedConversion[]> {
    const now = this.now();
    return this.db.transaction((tx) => recordConversions(tx, tenantId, items, now, { hooks: this.hooks, origins }));
  }
}
