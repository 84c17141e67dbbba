import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { WakeableLoop } from "../../platform/wakeable-loop.js";
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
const MAX_IN_FLIGHT = 256;

/**
 * The delivery loop of a worker node. It claims due events in batches and sends them side by
 * side without waiting for a batch to finish, so a slow receiver never holds up the others;
 * outcomes are written in batches as they come back. It sleeps until new events are announced,
 * a slot frees up while more were due, or the next poll.
 */
export class DeliveryWorker {
  private readonly loop: WakeableLoop;
  private stopListening: (() => Promise<void>) | null = null;
  private inFlight = 0;
  /** The last claim was full: more events may be due as soon as a slot frees up. */
  private backlog = false;
  private readonly written: OutcomeWriter;
  private readonly settled = new Set<Promise<void>>();

  constructor(private readonly deps: { db: Db; clock: Clock; log: FastifyBaseLogger; settings: DeliverySettings }) {
    this.written = new OutcomeWriter(deps.db, deps.log);
    this.loop = new WakeableLoop(
      () => this.round(),
      IDLE_POLL_MS,
      (error) => deps.log.error({ err: error }, "claiming webhook events failed"),
    );
  }

  /** The lease outlives the slowest attempt (timeout plus writing it), so no healthy attempt loses it. */
  private get leaseMs(): number {
    return this.deps.settings.timeoutMs * 2 + 30_000;
  }

  /** Claims up to `limit` due events and returns those that may be sent now, with the claim's token. */
  private async claim(limit: number): Promise<{ token: string; claimed: number; ready: ClaimedEvent[] }> {
    const { db, clock } = this.deps;
    const { token, events } = await claimDue(db, clock.now(), limit, this.leaseMs);
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
    await recordOutcomes(this.deps.db, outcomes);
    return claimed;
  }

  async start(): Promise<void> {
    if (this.stopListening) return;
    this.stopListening = await listenForEvents(this.deps.db, () => this.loop.wake());
    this.loop.start();
  }

  /** One round of the loop: claims as many events as there are free slots; true while more may be due. */
  private async round(): Promise<boolean> {
    const room = Math.min(BATCH, MAX_IN_FLIGHT - this.inFlight);
    if (room === 0) return false;
    const { token, claimed, ready } = await this.claim(room);
    this.backlog = claimed === room;
    this.launch(token, ready);
    return this.backlog;
  }

  /** Starts the claimed events' attempts; their outcomes go to the writer as they come back. */
  private launch(token: string, events: ClaimedEvent[]): void {
    for (const event of events) {
      this.inFlight += 1;
      const done: Promise<void> = this.attempt(event, token)
        .then((outcome) => this.written.add(outcome))
        .catch((error: unknown) => {
          // The lease runs out and another attempt follows: an error here loses nothing.
          this.deps.log.error({ err: error, eventId: event.id }, "delivering a webhook event failed");
        })
        .finally(() => {
          this.inFlight -= 1;
          this.settled.delete(done);
          if (this.backlog) this.loop.wake();
        });
      this.settled.add(done);
    }
  }

  /** Finishes the attempts under way and writes them; unclaimed events wait for the next worker. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await Promise.all([...this.settled]);
    await this.written.drain();
    await this.stopListening?.().catch(() => undefined);
    this.stopListening = null;
  }
}

/**
 * Writes outcomes as they come back: while one batch is being written the next gathers, so a
 * busy worker writes a few large batches instead of one transaction per attempt.
 */
class OutcomeWriter {
  private queue: Outcome[] = [];
  private writing: Promise<void> | null = null;

  constructor(
    private readonly db: Db,
    private readonly log: FastifyBaseLogger,
  ) {}

  add(outcome: Outcome): void {
    this.queue.push(outcome);
    this.writing ??= this.writeAll();
  }

  private async writeAll(): Promise<void> {
    try {
      while (this.queue.length > 0) {
        const batch = this.queue.splice(0, 500);
        try {
          await recordOutcomes(this.db, batch);
        } catch (error) {
          // Unwritten, the events' leases run out and they are attempted again: at least once.
          this.log.error({ err: error, outcomes: batch.length }, "writing webhook outcomes failed");
        }
      }
    } finally {
      // In the same turn as the last emptiness check: an outcome added later starts a new run.
      this.writing = null;
    }
  }

  async drain(): Promise<void> {
    while (this.writing) await this.writing;
  }
}
