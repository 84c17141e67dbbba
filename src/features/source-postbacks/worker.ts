import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { WakeableLoop } from "../../platform/wakeable-loop.js";
import type { DeliverySettings } from "../outgoing-webhooks/delivery.js";
import { attempt, type ClaimedPostback, claimDue, pause, recordOutcomes } from "./delivery.js";
import { listenForPostbacks } from "./queue.js";
import type { Postback } from "./schemas.js";

// New postbacks wake the worker at once (NOTIFY); this only bounds how late a retry that fell
// due is picked up.
const IDLE_POLL_MS = 1000;
const BATCH = 64;

const sendable = (p: ClaimedPostback): p is ClaimedPostback & { postback: Postback } => p.postback?.enabled === true;

/**
 * The postback loop of a worker node: claims due postbacks in batches, sends a batch side by side
 * (each bounded by WEBHOOK_TIMEOUT_MS) and writes its outcomes in one transaction. Postbacks go
 * to a few ad networks at the rate conversions come in, far below webhook volumes, so one batch
 * at a time is enough; the webhook worker's in-flight pipeline is not needed here.
 */
export class SourcePostbackWorker {
  private readonly loop: WakeableLoop;
  private stopListening: (() => Promise<void>) | null = null;

  constructor(private readonly deps: { db: Db; clock: Clock; log: FastifyBaseLogger; settings: DeliverySettings }) {
    this.loop = new WakeableLoop(
      async () => (await this.tick()) === BATCH,
      IDLE_POLL_MS,
      (error) => deps.log.error({ err: error }, "sending traffic-source postbacks failed"),
    );
  }

  /** The lease outlives the slowest attempt (timeout plus writing it). */
  private get leaseMs(): number {
    return this.deps.settings.timeoutMs * 2 + 30_000;
  }

  /** Claims, sends and records one batch; returns how many postbacks it claimed. */
  async tick(): Promise<number> {
    const { db, clock, settings } = this.deps;
    const { token, postbacks } = await claimDue(db, clock.now(), BATCH, this.leaseMs);
    if (postbacks.length === 0) return 0;
    await pause(
      db,
      postbacks.filter((p) => !sendable(p)).map((p) => p.id),
      token,
    );
    const outcomes = await Promise.all(
      postbacks.filter(sendable).map((p) => attempt(p, token, settings, () => clock.now())),
    );
    await recordOutcomes(db, outcomes);
    return postbacks.length;
  }

  async start(): Promise<void> {
    if (this.stopListening) return;
    this.stopListening = await listenForPostbacks(this.deps.db, () => this.loop.wake());
    this.loop.start();
  }

  /** Lets the batch under way finish; what is left waits in its table for the next worker. */
  async stop(): Promise<void> {
    await this.loop.stop();
    await this.stopListening?.().catch(() => undefined);
    this.stopListening = null;
  }
}
