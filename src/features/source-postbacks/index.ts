import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.js";
import type { Clock } from "../../platform/clock.js";
import type { Db, Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import { AddressPolicy } from "../../platform/webhook-sender.js";
import type { Principal } from "../auth/index.js";
import type { HostScreen } from "../outgoing-webhooks/index.js";
import type { ConversionHook, StatusChangeHook } from "../tracking/index.js";
import { queuePostbacks, queueStatusPostbacks } from "./hook.js";
import { SourcePostbackWorker } from "./worker.js";

export { postbackDeliveries } from "./deliveries.js";
export { SOURCE_POSTBACK_RETENTION } from "./retention.js";
// A traffic source's postback fields, as the catalog's traffic-source resource takes and answers them.
export { ClickIdParam, NullablePostback, PostbackOrNull } from "./schemas.js";

import type { Postback } from "./schemas.js";
import { checkPostback, POSTBACK_READ, POSTBACK_WRITE, type PostbackInput, resumePostbacks } from "./settings.js";

export type { SourcePostbackWorker } from "./worker.js";

/** The conversion hook that queues traffic-source postbacks in the conversion's transaction. */
export const sourcePostbackHook: ConversionHook = (tx, tenantId, conversions, now) =>
  queuePostbacks(tx, tenantId, conversions, now).then(() => undefined);

/** The status hook that re-fires postbacks of changed conversions where the source takes status changes. */
export const sourcePostbackStatusHook: StatusChangeHook = (tx, tenantId, changes, now) =>
  queueStatusPostbacks(tx, tenantId, changes, now).then(() => undefined);

/** The send-time address policy and the save-time DNS bound, as webhook settings use them. */
export function postbackHostScreen(config: Config): HostScreen {
  return { policy: new AddressPolicy(config.webhookAllowedHosts), timeoutMs: config.webhookSaveDnsTimeoutMs };
}

/**
 * What a traffic source's writes and reads in the catalog add for its postback. The postback
 * sends conversion data to a host the caller chooses, as an outgoing webhook does, so it takes
 * the webhooks' rights on top of the catalog's: setting it (or removing it) needs
 * webhooks.update (403 before anything is looked up), and only a caller with webhooks.read sees
 * it; for anyone else the item comes without its `postback` field (its URL often carries the
 * network's token). The postback is checked (its host resolved, refused as webhook URLs are)
 * before the transaction and stored with its defaults filled; once saved enabled, what waited
 * Paused while it was disabled or removed is sent (in the saving transaction).
 */
export function trafficSourcePostbacks(config: Config) {
  const screen = postbackHostScreen(config);
  return {
    async prepare(body: Record<string, unknown>, caller: Principal): Promise<void> {
      if (body.postback === undefined) return;
      if (!caller.permissions.has(POSTBACK_WRITE)) throw ApiError.forbidden(`Missing permission '${POSTBACK_WRITE}'`);
      body.postback = await checkPostback(body.postback as PostbackInput | null, screen);
    },
    present(item: Record<string, unknown>, caller: Principal): Record<string, unknown> {
      if (caller.permissions.has(POSTBACK_READ)) return item;
      const { postback: _hidden, ...rest } = item;
      return rest;
    },
    async updated(
      tx: Queryable,
      change: { tenantId: string; at: Date },
      item: Record<string, unknown>,
      body: Record<string, unknown>,
    ): Promise<void> {
      if (body.postback === undefined) return;
      await resumePostbacks(tx, change.tenantId, Number(item.id), item.postback as Postback | null, change.at);
    },
  };
}

/** The postback worker: the webhook engine's timeout, retry interval and address policy. */
export function sourcePostbackWorker(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  config: Config;
}): SourcePostbackWorker {
  return new SourcePostbackWorker({
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
