import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.js";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import { AddressPolicy } from "../../platform/webhook-sender.js";
import type { HostScreen } from "../outgoing-webhooks/url-screen.js";
import type { ConversionHook } from "../tracking/index.js";
import { queuePostbacks } from "./hook.js";
import { SourcePostbackWorker } from "./worker.js";

export { SOURCE_POSTBACK_RETENTION } from "./retention.js";
export { checkPostback, resumePostbacks } from "./settings.js";
export type { SourcePostbackWorker } from "./worker.js";

/** The conversion hook that queues traffic-source postbacks in the conversion's transaction. */
export const sourcePostbackHook: ConversionHook = (tx, tenantId, conversions, now) =>
  queuePostbacks(tx, tenantId, conversions, now).then(() => undefined);

/** The send-time address policy and the save-time DNS bound, as webhook settings use them. */
export function postbackHostScreen(config: Config): HostScreen {
  return { policy: new AddressPolicy(config.webhookAllowedHosts), timeoutMs: config.webhookSaveDnsTimeoutMs };
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
  });
}
