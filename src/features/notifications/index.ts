import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.js";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { AddressPolicy } from "../../platform/webhook-sender.js";
import { SecretBox } from "./signing.js";
import { NotificationWorker } from "./worker.js";

export { emitNotification } from "./events.js";
export { NOTIFICATION_RETENTION } from "./retention.js";

/**
 * Operational webhooks on this node: the secret box and URL policy the routes use, and the
 * delivery loop (started by the worker role; tests call `worker.tick()`).
 */
export interface Notifications {
  readonly box: SecretBox;
  readonly policy: AddressPolicy;
  readonly worker: NotificationWorker;
}

export function notifications(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  config: Config;
  /** Derives the key that encrypts signing secrets at rest (the JWT secret, shared by every node). */
  serviceSecret: string;
}): Notifications {
  const box = new SecretBox(deps.serviceSecret);
  const policy = new AddressPolicy(deps.config.webhookAllowedHosts);
  const worker = new NotificationWorker({
    db: deps.db,
    clock: deps.clock,
    log: deps.log,
    settings: {
      timeoutMs: deps.config.webhookTimeoutMs,
      retryScheduleS: deps.config.notificationRetryScheduleS,
      policy,
      box,
    },
  });
  return { box, policy, worker };
}
