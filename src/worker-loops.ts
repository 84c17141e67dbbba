import type { NotificationWorker } from "./features/notifications/worker.js";
import type { DeliveryWorker } from "./features/outgoing-webhooks/worker.js";
import type { MailSender } from "./platform/mail.js";

/** Another feature's background loop (Google Ads uploads, ...): started and stopped with the rest. */
export interface BackgroundLoop {
  start(): void | Promise<void>;
  stop(): Promise<void>;
}

/**
 * The worker role's loops of one node: the mail outbox, outgoing webhook delivery and
 * operational webhook delivery. One owner: `buildApp` makes them and stops them when the app
 * closes (after the requests have drained); `main.ts` only starts them, for the worker role.
 * Stopping twice, or stopping loops never started, is harmless.
 */
export class WorkerLoops {
  #running = false;

  constructor(
    private readonly loops: { mail: MailSender; delivery: DeliveryWorker; notifications: NotificationWorker },
    /** Features' own loops; a feature pushes its loop here in app.ts. */
    readonly others: BackgroundLoop[] = [],
  ) {}

  get running(): boolean {
    return this.#running;
  }

  async start(): Promise<void> {
    if (this.#running) return;
    this.#running = true;
    this.loops.mail.start();
    await this.loops.delivery.start();
    await this.loops.notifications.start();
    for (const loop of this.others) await loop.start();
  }

  /** Lets the rounds under way finish; what is left waits in its table for the next worker. */
  async stop(): Promise<void> {
    this.#running = false;
    await this.loops.mail.stop();
    await this.loops.delivery.stop();
    await this.loops.notifications.stop();
    for (const loop of this.others) await loop.stop();
  }
}
