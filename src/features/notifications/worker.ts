import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { WakeableLoop } from "../../platform/wakeable-loop.js";
import { claimDue, deliver, type NotificationSettings } from "./delivery.js";
import { listenForMessages } from "./events.js";

// New messages wake the worker at once (NOTIFY); this only bounds how late a retry that fell
// due is picked up.
const IDLE_POLL_MS = 1000;
const BATCH = 32;

/**
 * The operational webhook loop of a worker node: claims due messages in batches, sends them
 * side by side, and sleeps until new messages are announced or the next poll.
 */
export class NotificationWorker {
  private readonly loop: WakeableLoop;
  private stopListening: (() => Promise<void>) | null = null;

  constructor(private readonly deps: { db: Db; clock: Clock; log: FastifyBaseLogger; settings: NotificationSettings }) {
    this.loop = new WakeableLoop(
      async () => (await this.tick()) > 0,
      IDLE_POLL_MS,
      (error) => deps.log.error({ err: error }, "claiming operational webhook messages failed"),
    );
  }

  /** The lease outlives the slowest attempt (timeout plus writing it), so no healthy attempt loses it. */
  private get leaseMs(): number {
    return this.deps.settings.timeoutMs * 2 + 30_000;
  }

  /** Claims and delivers one batch; returns how many messages it attempted. */
  async tick(): Promise<number> {
    const { db, clock, settings } = this.deps;
    const { token, messages } = await claimDue(db, clock.now(), BATCH, this.leaseMs);
    await Promise.all(
      messages.map((message) =>
        deliver(db, message, token, settings, () => clock.now()).catch((error: unknown) => {
          // The lease runs out and another attempt follows: an error here loses nothing.
          this.deps.log.error({ err: error, messageId: message.id }, "delivering an operational webhook failed");
        }),
      ),
    );
    return messages.length;
  }

  async start(): Promise<void> {
    if (this.stopListening) return;
    this.stopListening = await listenForMessages(this.deps.db, () => this.loop.wake());
    this.loop.start();
  }

  /** Finishes the batch in hand; unclaimed messages wait in the table for the next worker. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.stopListening?.().catch(() => undefined);
    this.stopListening = null;
  }
}
