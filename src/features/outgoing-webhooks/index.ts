import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.js";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { AddressPolicy } from "../../platform/webhook-sender.js";
import type { ClickHook, ConversionHook, StatusChangeHook } from "../tracking/index.js";
import { clickFanOut } from "./click-fan-out.js";
import { fanOut, fanOutStatusChanges } from "./fan-out.js";
import { DeliveryWorker } from "./worker.js";

export { webhookDeliveries } from "./deliveries.js";
// What the other destinations (traffic-source postbacks, Google Ads) share with the webhooks: the
// retry rule and the delivery log's page, the conversion snapshot and its placeholders, the
// address screen, and how long a delivery's history is kept.
export { type DeliverySettings, nextAttempt } from "./delivery.js";
export { type Attempt, attemptsPage } from "./event-service.js";
export { recheckHeldEvents, webhookUsage } from "./metering.js";
export { liveVocabulary, PlaceholderError, renderUrl, validateTemplate } from "./placeholders.js";
export { WEBHOOK_HISTORY_DAYS, WEBHOOK_RETENTION } from "./retention.js";
export { placeholderValues, type Snapshot, snapshotsOf } from "./snapshot.js";
export { blockedHostProblem, type HostScreen } from "./url-screen.js";
export type { DeliveryWorker } from "./worker.js";

/** The conversion hook that writes delivery events in the conversion's transaction. */
export const webhookFanOut: ConversionHook = (tx, tenantId, conversions, now) =>
  fanOut(tx, tenantId, conversions, now).then(() => undefined);

/** The status hook that sends a changed conversion again to the webhooks that take status changes. */
export const webhookStatusFanOut: StatusChangeHook = (tx, tenantId, changes, now) =>
  fanOutStatusChanges(tx, tenantId, changes, now).then(() => undefined);

/** The click hook that writes Click webhooks in the click batch's transaction. */
export const webhookClickFanOut: ClickHook = clickFanOut;

export function deliveryWorker(deps: { db: Db; clock: Clock; log: FastifyBaseLogger; config: Config }): DeliveryWorker {
  return new DeliveryWorker({
    db: deps.db,
    clock: deps.clock,
    log: deps.log,
    settings: {
      timeoutMs: deps.config.webhookTimeoutMs,
      retryIntervalMs: deps.config.webhookRetryIntervalS * 1000,
      policy: new AddressPolicy(deps.config.webhookAllowedHosts),
    },
    share: deps.config.deliveryShare,
  });
}
