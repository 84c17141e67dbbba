import type { FastifyBaseLogger } from "fastify";
import { BatchWriter } from "../../platform/batch-writer.js";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { FairClaimer, type FairShare, type InFlight } from "../../platform/fair-claimer.js";
import {
  attempt,
  type ClaimedEvent,
  claimDue,
  type DeliverySettings,
  type Outcome,
  recordOutcomes,
} from "./delivery.js";
import { listenForEvents } from "./fan-out.js";
import { admit } from "./metering.js";
import { screen } from "./url-screen.js";

// New events wake the worker at once (NOTIFY); this only bounds how late a retry that fell due
// is picked up.
const IDLE_POLL_MS = 1000;
const BATCH = 64;
/** Attempts one worker has under way at once; a hanging receiver holds one slot, not the loop. */
export const MAX_IN_FLIGHT = 512;

interface Claimed {
  event: ClaimedEvent;
  token: string;
}

/**
 * The delivery loop of a worker node. It claims due events whenever a slot is free and sends them
 * side by side without waiting for a batch to finish, so a slow receiver never holds up the
 * others; a tenant or a webhook that has its cap of attempts under way (DELIVERY_IN_FLIGHT_PER_*)
 * is passed over by the claim, so one whose receivers hang cannot take the others' slots.
 * Outcomes are written in batches as they come back. It sleeps until new events are announced, a
 * slot frees up while events were passed over, or the next poll.
 */
export class DeliveryWorker {
  private readonly claimer: FairClaimer<Claimed>;
  private stopListening: (() => Promise<void>) | null = null;
  private readonly written: BatchWriter<Outcome>;
  /** Claims, allowance counts and outcomes: several commits per delivery, none an answer waits for. */
  private readonly db: Db;

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      log: FastifyBaseLogger;
      settings: DeliverySettings;
      share?: { perTenant: number; perDestination: number };
    },
  ) {
    this.db = deps.db.withoutFlushWait();
    this.written = new BatchWriter(
      (outcomes) => recordOutcomes(this.db, outcomes),
      // Unwritten, the events' leases run out and they are attempted again: at least once.
      (error, count) => deps.log.error({ err: error, outcomes: count }, "writing webhook outcomes failed"),
    );
    this.claimer = new FairClaimer<Claimed>({
      caps: {
        maxInFlight: MAX_IN_FLIGHT,
        batch: BATCH,
        perTenant: deps.share?.perTenant ?? MAX_IN_FLIGHT,
        perDestination: deps.share?.perDestination ?? MAX_IN_FLIGHT,
      },
      idleMs: IDLE_POLL_MS,
      keysOf: ({ event }) => ({ tenant: event.tenant_id, destination: event.webhook_id }),
      claim: async (limit, share) => {
        const { token, claimed, ready } = await this.claim(limit, share);
        return { claimed, ready: ready.map((event) => ({ event, token })) };
      },
      run: async ({ event, token }) => this.written.add(await this.attempt(event, token)),
      onError: (error, item) =>
        item
          ? // The lease runs out and another attempt follows: an error here loses nothing.
            deps.log.error({ err: error, eventId: item.event.id }, "delivering a webhook event failed")
          : deps.log.error({ err: error }, "claiming webhook events failed"),
    });
  }

  /** The lease outlives the slowest attempt (timeout plus writing it), so no healthy attempt loses it. */
  private get leaseMs(): number {
    return this.deps.settings.timeoutMs * 2 + 30_000;
  }

  /** Claims up to `limit` due events and returns those that may be sent now, with the claim's token. */
  private async claim(
    limit: number,
    share?: FairShare,
  ): Promise<{ token: string; claimed: number; ready: ClaimedEvent[] }> {
    const { db } = this;
    const { clock } = this.deps;
    const { token, events } = await claimDue(db, clock.now(), limit, this.leaseMs, share);
    if (events.length === 0) return { token, claimed: 0, ready: [] };
    const sendable = await screen(db, events, token, clock.now());
    return { token, claimed: events.length, ready: await admit(db, sendable, token, clock.now()) };
  }

  private attempt(event: ClaimedEvent, token: string): Promise<Outcome> {
    return attempt(event, token, this.deps.settings, () => this.deps.clock.now());
  }

  /** Claims and delivers one batch and writes its outcomes; returns how many events it claimed. */
  async tick(): Promise<number> {
    const { token, claimed, ready } = await this.claim(BATCH);
    const outcomes = await Promise.all(ready.map((event) => this.attempt(event, token)));
    await recordOutcomes(this.db, outcomes);
    return claimed;
  }

  /** Attempts under way on this worker, per tenant and per webhook. */
  get inFlight(): InFlight {
    return this.claimer.inFlight;
  }

  async start(): Promise<void> {
    if (this.stopListening) return;
    this.stopListening = await listenForEvents(this.deps.db, () => this.claimer.wake());
    this.claimer.start();
  }

  /** Finishes the attempts under way and writes them; unclaimed events wait for the next worker. */
  async stop(): Promise<void> {
    await this.claimer.stop();
    await this.written.drain();
    await this.stopListening?.().catch(() => undefined);
    this.stopListening = null;
  }
}
