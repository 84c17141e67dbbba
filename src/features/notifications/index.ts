import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.js";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import type { SealedColumn } from "../../platform/reseal.js";
import type { SecretsKeyring } from "../../platform/sealed-box.js";
import { AddressPolicy } from "../../platform/webhook-sender.js";
import type { StatusChangeHook } from "../tracking/index.js";
import { emitNotifications } from "./events.js";
import { NOTIFICATION_SECRETS_LABEL, SecretBox } from "./signing.js";
import { NotificationWorker } from "./worker.js";

export { emitNotification } from "./events.js";

/**
 * The status hook that announces each change of a conversion's status to the operational
 * webhooks that take `conversion.status_changed`: `{ conversionId, status, previousStatus, reason }`.
 */
export const statusChangeNotice: StatusChangeHook = (tx, tenantId, changes, now) =>
  emitNotifications(
    tx,
    tenantId,
    "conversion.status_changed",
    changes.map((c) => ({
      conversionId: c.conversion.id,
      status: c.conversion.status,
      previousStatus: c.previousStatus,
      reason: c.reason,
    })),
    now,
  );
export { NOTIFICATION_RETENTION } from "./retention.js";

/** Where signing secrets are stored sealed: what `npm run secrets:reseal` seals again. */
export const NOTIFICATION_SEALED_COLUMNS: readonly SealedColumn[] = ["secret_enc", "previous_secret_enc"].map(
  (column) => ({ table: "notification_webhooks", key: "id", column, label: NOTIFICATION_SECRETS_LABEL }),
);

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
  /** The keys that seal signing secrets at rest (SECRETS_KEY, shared by every node). */
  keyring: SecretsKeyring;
}): Notifications {
  const box = new SecretBox(deps.keyring);
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
    share: deps.config.deliveryShare,
  });
  return { box, policy, worker };
}
