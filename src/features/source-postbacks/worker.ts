import type { FastifyBaseLogger } from "fastify";
import { BatchWriter } from "../../platform/batch-writer.js";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { FairClaimer, type FairShare, type InFlight } from "../../platform/fair-claimer.js";
import type { DeliverySettings } from "../outgoing-webhooks/index.js";
import { attempt, type ClaimedPostback, claimDue, type Outcome, pause, recordOutcomes } from "./delivery.js";
import { listenForPostbacks } from "./queue.js";
import type { Postback } from "./schemas.js";

// New postbacks wake the worker at once (NOTIFY); this only bounds how late a retry that fell
// due is picked up.
const IDLE_POLL_MS = 1000;
const BATCH = 64;
/** Postbacks one worker has under way at once; a hanging network holds one slot, not the loop. */
export const MAX_IN_FLIGHT = 512;

const sendable = (p: ClaimedPostback): p is ClaimedPostback & { postback: Postback } => p.postback?.enabled === true;

interface Claimed {
  postback: ClaimedPostback & { postback: Postback };
  token: string;
}

/**
 * The postback loop of a worker node: claims due postbacks whenever a slot is free and sends each
 * in a slot of its own (bounded by WEBHOOK_TIMEOUT_MS), never waiting for a batch to finish. A
 * tenant or a traffic source with its cap of attempts under way (DELIVERY_IN_FLIGHT_PER_*) is
 * passed over by the claim, so one network that hangs delays another tenant's postbacks by no
 * more than a claim. Outcomes are written in batches as they come back.
 */
export class SourcePostbackWorker {
  private readonly claimer: FairClaimer<Claimed>;
  private readonly written: BatchWriter<Outcome>;
  private stopListening: (() => Promise<void>) | null = null;

  constructor(
    private readonly deps: {
      db: Db;
      clock: Clock;
      log: FastifyBaseLogger;
      settings: DeliverySettings;
      share?: { perTenant: number; perDestination: number };
    },
  ) {
    this.written = new BatchWriter(
      (outcomes) => recordOutcomes(deps.db, outcomes),
      (error, count) =>
        // Unwritten, the postbacks' leases run out and they are sent again: at least once.
        deps.log.error({ err: error, outcomes: count }, "writing traffic-source postback outcomes failed"),
    );
    this.claimer = new FairClaimer<Claimed>({
      caps: {
        maxInFlight: MAX_IN_FLIGHT,
        batch: BATCH,
        perTenant: deps.share?.perTenant ?? MAX_IN_FLIGHT,
        perDestination: deps.share?.perDestination ?? MAX_IN_FLIGHT,
      },
      idleMs: IDLE_POLL_MS,
      keysOf: ({ postback }) => ({ tenant: postback.tenant_id, destination: String(postback.traffic_source_id) }),
      claim: async (limit, share) => {
        const { token, postbacks } = await this.claim(limit, share);
        return {
          claimed: postbacks.length,
          ready: postbacks.filter(sendable).map((postback) => ({ postback, token })),
        };
      },
      run: async ({ postback, token }) =>
        this.written.add(await attempt(postback, token, deps.settings, () => deps.clock.now())),
      onError: (error, item) =>
        item
          ? // The lease runs out and another attempt follows: an error here loses nothing.
            deps.log.error({ err: error, postbackId: item.postback.id }, "sending a traffic-source postback failed")
          : deps.log.error({ err: error }, "claiming traffic-source postbacks failed"),
    });
  }

  /** The lease outlives the slowest attempt (timeout plus writing it). */
  private get leaseMs(): number {
    return this.deps.settings.timeoutMs * 2 + 30_000;
  }

  /** Claims up to `limit` due postbacks; those whose source's postback is off wait Paused. */
  private async claim(limit: number, share?: FairShare) {
    const { db, clock } = this.deps;
    const claimed = await claimDue(db, clock.now(), limit, this.leaseMs, share);
    await pause(
      db,
      claimed.postbacks.filter((p) => !sendable(p)).map((p) => p.id),
      claimed.token,
    );
    return claimed;
  }

  /** Claims, sends and records one batch; returns how many postbacks it claimed. */
  async tick(): Promise<number> {
    const { db, clock, settings } = this.deps;
    const { token, postbacks } = await this.claim(BATCH);
    const outcomes = await Promise.all(
      postbacks.filter(sendable).map((p) => attempt(p, token, settings, () => clock.now())),
    );
    await recordOutcomes(db, outcomes);
    return postbacks.length;
  }

  /** Attempts under way on this worker, per tenant and per traffic source. */
  get inFlight(): InFlight {
    return this.claimer.inFlight;
  }

  async start(): Promise<void> {
    if (this.stopListening) return;
    this.stopListening = await listenForPostbacks(this.deps.db, () => this.claimer.wake());
    this.claimer.start();
  }

  /** Finishes the attempts under way and writes them; what is left waits in its table for the next worker. */
  async stop(): Promise<void> {
    await this.claimer.stop();
    await this.written.drain();
    await this.stopListening?.().catch(() => undefined);
    this.stopListening = null;
  }
}
