import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { claimDue, type DeliverySettings, deliver } from "./delivery.js";
import { listenForEvents } from "./fan-out.js";
import { admit } from "./metering.js";
import { screen } from "./url-screen.js";

// New events wake the worker at once (NOTIFY); this only bounds how late a retry that fell due
// is picked up.
const IDLE_POLL_MS = 1000;
const BATCH = 64;

/**
 * The delivery loop of a worker node: claims due events in batches, sends them side by side,
 * and sleeps until new events are announced or the next poll.
 */
export class DeliveryWorker {
  private running = false;
  private loop: Promise<void> | null = null;
  private wakeUp: (() => void) | null = null;
  private stopListening: (() => Promise<void>) | null = null;

  constructor(private readonly deps: { db: Db; clock: Clock; log: FastifyBaseLogger; settings: DeliverySettings }) {}

  /** The lease outlives the slowest attempt (timeout plus writing it), so no healthy attempt loses it. */
  private get leaseMs(): number {
    return this.deps.settings.timeoutMs * 2 + 30_000;
  }

  /** Claims and delivers one batch; returns how many events it attempted. */
  async tick(): Promise<number> {
    const { db, clock, settings } = this.deps;
    const { token, events } = await claimDue(db, clock.now(), BATCH, this.leaseMs);
    if (events.length === 0) return 0;
    const sendable = await screen(db, events, token, clock.now());
    const admitted = await admit(db, sendable, token, clock.now());
    await Promise.all(
      admitted.map((event) =>
        deliver(db, event, token, settings, () => clock.now()).catch((error: unknown) => {
          // The lease runs out and another attempt follows: an error here loses nothing.
          this.deps.log.error({ err: error, eventId: event.id }, "delivering a webhook event failed");
        }),
      ),
    );
    return events.length;
  }

  async start(): Promise<void> {
    if (this.running) return;
    this.running = true;
    this.stopListening = await listenForEvents(this.deps.db, () => this.wake());
    this.loop = this.run();
  }

  wake(): void {
    this.wakeUp?.();
  }

  private async run(): Promise<void> {
    while (this.running) {
      let attempted = 0;
      try {
        attempted = await this.tick();
      } catch (error) {
        this.deps.log.error({ err: error }, "claiming webhook events failed");
      }
      if (attempted === 0 && this.running) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, IDLE_POLL_MS);
          this.wakeUp = () => {
            clearTimeout(timer);
            resolve();
          };
        });
        this.wakeUp = null;
      }
    }
  }

  /** Finishes the batch in hand; unclaimed events wait in the table for the next worker. */
  async stop(): Promise<void> {
    this.running = false;
    this.wake();
    await this.loop;
    await this.stopListening?.().catch(() => undefined);
    this.loop = null;
  }
}
