import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { FairClaimer, type InFlight } from "../../platform/fair-claimer.js";
import { type ClaimedMessage, claimDue, deliver, type NotificationSettings } from "./delivery.js";
import { listenForMessages } from "./events.js";

// New messages wake the worker at once (NOTIFY); this only bounds how late a retry that fell
// due is picked up.
const IDLE_POLL_MS = 1000;
const BATCH = 32;
/** Messages one worker has under way at once; a hanging receiver holds one slot, not the loop. */
export const MAX_IN_FLIGHT = 256;

interface Claimed {
  message: ClaimedMessage;
  token: string;
}

/**
 * The operational webhook loop of a worker node: claims due messages whenever a slot is free and
 * sends each in a slot of its own, never waiting for a batch to finish. A tenant or a webhook
 * with its cap of attempts under way (DELIVERY_IN_FLIGHT_PER_*) is passed over by the claim, so
 * one whose receiver hangs cannot hold up another tenant's messages. It sleeps until new
 * messages are announced, a slot frees up while messages were passed over, or the next poll.
 */
export class NotificationWorker {
  private readonly claimer: FairClaimer<Claimed>;
  private stopListening: (() => Promise<void>) | null = null;

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      log: FastifyBaseLogger;
      settings: NotificationSettings;
      share?: { perTenant: number; perDestination: number };
    },
  ) {
    this.claimer = new FairClaimer<Claimed>({
      caps: {
        maxInFlight: MAX_IN_FLIGHT,
        batch: BATCH,
        perTenant: deps.share?.perTenant ?? MAX_IN_FLIGHT,
        perDestination: deps.share?.perDestination ?? MAX_IN_FLIGHT,
      },
      idleMs: IDLE_POLL_MS,
      keysOf: ({ message }) => ({ tenant: message.tenant_id, destination: message.webhook_id }),
      claim: async (limit, share) => {
        const { token, messages } = await claimDue(deps.db, deps.clock.now(), limit, this.leaseMs, share);
        return { claimed: messages.length, ready: messages.map((message) => ({ message, token })) };
      },
      run: async ({ message, token }) => {
        await deliver(deps.db, message, token, deps.settings, () => deps.clock.now());
      },
      onError: (error, item) =>
        item
          ? // The lease runs out and another attempt follows: an error here loses nothing.
            deps.log.error({ err: error, messageId: item.message.id }, "delivering an operational webhook failed")
          : deps.log.error({ err: error }, "claiming operational webhook messages failed"),
    });
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

  /** Messages under way on this worker, per tenant and per webhook. */
  get inFlight(): InFlight {
    return this.claimer.inFlight;
  }

  async start(): Promise<void> {
    if (this.stopListening) return;
    this.stopListening = await listenForMessages(this.deps.db, () => this.claimer.wake());
    this.claimer.start();
  }

  /** Finishes the messages under way; unclaimed messages wait in the table for the next worker. */
  async stop(): Promise<void> {
    await this.claimer.stop();
    await this.stopListening?.().catch(() => undefined);
    this.stopListening = null;
  }
}
