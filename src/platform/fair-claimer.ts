import { WakeableLoop } from "./wakeable-loop.js";

/**
 * Fair, continuous claiming for the delivery loops (webhooks, postbacks, operational webhooks,
 * Google Ads, mail; docs/limits.md "Delivery fairness"). A loop claims as soon as a slot frees up,
 * never waiting for a batch to finish, and its claim passes over the due rows of a tenant or a
 * destination that already has its cap of attempts under way: a tenant whose receivers hang for
 * their whole timeout holds at most its cap of slots, and another tenant's row is claimed at once.
 */

/** Whose an item is and where it goes: the keys its attempt is counted under while under way. */
export interface FairKeys {
  tenant: string;
  destination: string;
}

/** For one kind of key: the cap, and the room left of the keys that have attempts under way. */
export interface KeyRooms {
  cap: number;
  /** Keys with attempts under way and room left; a key not listed has the whole cap. */
  keys: string[];
  rooms: number[];
  /** Keys at their cap: none of their rows is claimed. */
  full: string[];
}

export interface FairShare {
  tenants: KeyRooms;
  destinations: KeyRooms;
}

export interface FairCaps {
  /** Attempts one loop has under way at once (sockets, memory). */
  maxInFlight: number;
  /** Rows one claim takes at most. */
  batch: number;
  perTenant: number;
  perDestination: number;
}

/** Counts the attempts under way per tenant and per destination. */
export class InFlight {
  #total = 0;
  readonly #tenants = new Map<string, number>();
  readonly #destinations = new Map<string, number>();
  /** Keys that reached their cap and have not yet drained to its refill mark. */
  readonly #fullTenants = new Set<string>();
  readonly #fullDestinations = new Set<string>();

  constructor(readonly caps: FairCaps) {}

  get total(): number {
    return this.#total;
  }

  of(kind: "tenant" | "destination", key: string): number {
    return (kind === "tenant" ? this.#tenants : this.#destinations).get(key) ?? 0;
  }

  add(keys: FairKeys): void {
    this.#total += 1;
    bump(this.#tenants, keys.tenant, 1, this.caps.perTenant, this.#fullTenants);
    bump(this.#destinations, keys.destination, 1, this.caps.perDestination, this.#fullDestinations);
  }

  /** True when this opened room a claim could use: the loop's last slot, or a key's refill. */
  remove(keys: FairKeys): boolean {
    const wasAtMax = this.#total >= this.caps.maxInFlight;
    const fullBefore = this.fullKeys;
    this.#total -= 1;
    bump(this.#tenants, keys.tenant, -1, this.caps.perTenant, this.#fullTenants);
    bump(this.#destinations, keys.destination, -1, this.caps.perDestination, this.#fullDestinations);
    return wasAtMax || this.fullKeys < fullBefore;
  }

  /** Keys at their cap, of both kinds: a claim grows this only while it makes progress. */
  get fullKeys(): number {
    return this.#fullTenants.size + this.#fullDestinations.size;
  }

  share(): FairShare {
    return {
      tenants: rooms(this.#tenants, this.caps.perTenant, this.#fullTenants),
      destinations: rooms(this.#destinations, this.caps.perDestination, this.#fullDestinations),
    };
  }
}

/**
 * How far below its cap a full key must drain before it is claimed for again: a quarter of the
 * cap (at least one). Refilled slot by slot, a busy destination at its cap would cost one claim
 * (and its metering transaction) per attempt, which held one webhook to about 200 deliveries a
 * second; refilled a quarter at a time, each claim takes many.
 */
function refillMark(cap: number): number {
  return cap - Math.max(1, Math.floor(cap / 4));
}

function bump(counts: Map<string, number>, key: string, by: number, cap: number, full: Set<string>): void {
  const next = (counts.get(key) ?? 0) + by;
  if (next <= 0) counts.delete(key);
  else counts.set(key, next);
  if (next >= cap) full.add(key);
  else if (next <= refillMark(cap)) full.delete(key);
}

function rooms(counts: Map<string, number>, cap: number, full: Set<string>): KeyRooms {
  const result: KeyRooms = { cap, keys: [], rooms: [], full: [...full] };
  for (const [key, n] of counts) {
    if (full.has(key)) continue;
    result.keys.push(key);
    result.rooms.push(cap - n);
  }
  return result;
}

/** The share of a claim made with nothing under way and no cap below `limit` (tests, tools, a batch tick). */
export function unlimitedShare(limit: number): FairShare {
  const none = (): KeyRooms => ({ cap: limit, keys: [], rooms: [], full: [] });
  return { tenants: none(), destinations: none() };
}

/** A table's due rows as `fairDueIds` reads them. */
export interface FairTable {
  table: string;
  /** The due condition (may name the caller's parameters, e.g. `$1` for now). */
  due: string;
  /** Text expressions of a row's tenant and destination keys. */
  tenant: string;
  destination: string;
  /** The claim order; ties are broken by the row's id. */
  order: string;
  /** The row's id (returned as `id`), when the column has another name. */
  id?: string;
}

/**
 * Due rows looked at per slot claimed: the window that is ranked per key. Keys at their cap are
 * left out before the window is taken, so a tenant with thousands of due rows cannot fill it
 * for long: once it reaches its cap its rows are passed over and the others' come into view.
 */
const CANDIDATES_PER_SLOT = 4;

/**
 * A subquery of the ids of up to `limit` due rows of `spec.table`, in claim order, taking no
 * more of a tenant's or a destination's rows than its room in `share`. Its parameters are
 * appended to `params` (so the caller's `$1`... stay as they are). The candidates are locked
 * FOR UPDATE SKIP LOCKED below the ranking (a lock cannot stand beside a window function), so
 * a worker claiming side by side takes the next rows rather than none; the caller updates the
 * ids in the same statement.
 */
export function fairDueIds(spec: FairTable, share: FairShare, limit: number, params: unknown[]): string {
  const p = (value: unknown): string => {
    params.push(value);
    return `$${params.length}`;
  };
  const { tenants: t, destinations: d } = share;
  const id = spec.id ?? "id";
  return `select ranked.id from (
      select c.id, c.claim_order, c.tenant_key, c.destination_key,
             row_number() over (partition by c.tenant_key order by c.claim_order, c.id) as tenant_rank,
             row_number() over (partition by c.destination_key order by c.claim_order, c.id) as destination_rank
        from (select ${id} as id, ${spec.order} as claim_order, ${spec.tenant} as tenant_key,
                     ${spec.destination} as destination_key
                from ${spec.table}
               where ${spec.due}
                 and not (${spec.tenant} = any(${p(t.full)}::text[]))
                 and not (${spec.destination} = any(${p(d.full)}::text[]))
               order by ${spec.order}, ${id}
               limit ${p(limit * CANDIDATES_PER_SLOT)}
               for update skip locked) c) ranked
      left join unnest(${p(t.keys)}::text[], ${p(t.rooms)}::int[]) as tr (key, room) on tr.key = ranked.tenant_key
      left join unnest(${p(d.keys)}::text[], ${p(d.rooms)}::int[]) as dr (key, room) on dr.key = ranked.destination_key
     where ranked.tenant_rank <= coalesce(tr.room, ${p(t.cap)}::int)
       and ranked.destination_rank <= coalesce(dr.room, ${p(d.cap)}::int)
     order by ranked.claim_order, ranked.id
     limit ${p(limit)}`;
}

export interface FairClaimerOptions<T> {
  caps: FairCaps;
  /** How late a row that fell due without a wake-up (a retry) is claimed. */
  idleMs: number;
  keysOf(item: T): FairKeys;
  /**
   * One claim of up to `limit` rows within `share`: `claimed` counts the rows taken, `ready`
   * those to run now (the rest were given back, e.g. held or paused, and are not under way).
   */
  claim(limit: number, share: FairShare): Promise<{ claimed: number; ready: T[] }>;
  /** One item's attempt and its outcome; its slot frees when it settles. */
  run(item: T): Promise<void>;
  onError(error: unknown, item?: T): void;
}

/**
 * A loop that claims whenever it has free slots and runs each claimed item in a slot of its own:
 * a hanging receiver holds one slot, not the loop. It claims again at once while a claim came
 * back full (or left out more keys, now at their cap), and otherwise sleeps until `wake()` (a
 * NOTIFY), a slot freed while rows were passed over, or the idle poll.
 */
export class FairClaimer<T> {
  readonly inFlight: InFlight;
  readonly #loop: WakeableLoop;
  readonly #settled = new Set<Promise<void>>();
  /** The last claim was full or passed rows over: a freed slot may let more be claimed. */
  #backlog = false;

  constructor(private readonly options: FairClaimerOptions<T>) {
    this.inFlight = new InFlight(options.caps);
    this.#loop = new WakeableLoop(
      () => this.round(),
      options.idleMs,
      (error) => options.onError(error),
    );
  }

  start(): void {
    this.#loop.start();
  }

  wake(): void {
    this.#loop.wake();
  }

  /** One claim as the loop makes it; returns whether more may be due at once. */
  async round(): Promise<boolean> {
    const { caps } = this.options;
    const limit = Math.min(caps.batch, caps.maxInFlight - this.inFlight.total);
    if (limit <= 0) return false;
    const share = this.inFlight.share();
    const fullBefore = share.tenants.full.length + share.destinations.full.length;
    const { claimed, ready } = await this.options.claim(limit, share);
    for (const item of ready) this.launch(item);
    const fullAfter = this.inFlight.fullKeys;
    this.#backlog = claimed === limit || fullAfter > 0;
    // A claim that filled keys to their cap may have passed over other keys' rows beyond its window.
    return claimed === limit || (claimed > 0 && fullAfter > fullBefore);
  }

  private launch(item: T): void {
    const keys = this.options.keysOf(item);
    this.inFlight.add(keys);
    const done: Promise<void> = Promise.resolve()
      .then(() => this.options.run(item))
      .catch((error: unknown) => this.options.onError(error, item))
      .finally(() => {
        const opened = this.inFlight.remove(keys);
        this.#settled.delete(done);
        // While keys are at their cap, a claim made for every settled attempt would find only
        // their rows and take none (a wasted statement per attempt, which held one busy webhook
        // to about 250 deliveries a second): claim again when room opened, or nothing is capped.
        if (this.#backlog && (opened || this.inFlight.fullKeys === 0)) this.#loop.wake();
      });
    this.#settled.add(done);
  }

  /** Waits for the attempts under way. */
  async settle(): Promise<void> {
    while (this.#settled.size > 0) await Promise.all([...this.#settled]);
  }

  /** No new claim; the attempts under way finish. Unclaimed rows wait for the next worker. */
  async stop(): Promise<void> {
    await this.#loop.stop();
    await this.settle();
  }
}
