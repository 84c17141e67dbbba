import type { Config } from "./config.js";
import type { ApiKeyVerifier, JwtSigner, LastUsedRecorder, SignedInPeople } from "./features/auth/index.js";
import type { Notifications } from "./features/notifications/index.js";
import type { DeliveryWorker } from "./features/outgoing-webhooks/index.js";
import type { ReportGate } from "./features/reports/index.js";
import type { Tracking } from "./features/tracking/index.js";
import type { UsageMeter } from "./features/usage/index.js";
import type { BuildInfo } from "./platform/build-info.js";
import type { Clock } from "./platform/clock.js";
import type { Db } from "./platform/db/index.js";
import type { JobRegistry } from "./platform/jobs.js";
import type { MailSender } from "./platform/mail.js";

/**
 * The process's shared parts, assembled once, in app.ts. A route plugin takes only the part it
 * uses (a `Pick` of this, e.g. `AuditRouteDeps`), so its signature says what it can reach.
 */
export interface AppContext {
  config: Config;
  db: Db;
  clock: Clock;
  /** This process's id in heartbeats and job runs. */
  nodeId: string;
  apiKeys: ApiKeyVerifier;
  /** Verified bearer tokens and signed-in people of this node, forgotten on every node when they change. */
  people: SignedInPeople;
  /** Coalesces each key's last use into one write a minute. */
  lastUsed: LastUsedRecorder;
  /** Buffers API usage rows and writes them in batches. */
  usage: UsageMeter;
  /** Delivers the mail outbox (started by the worker role). */
  mail: MailSender;
  jwt: JwtSigner;
  jobs: JobRegistry;
  build: BuildInfo;
  /** Catalog cache, click buffer and conversion hooks of this node. */
  tracking: Tracking;
  /** Outgoing webhook delivery (started by the worker role). */
  delivery: DeliveryWorker;
  /** Operational webhooks: secrets, URL policy and their delivery loop (started by the worker role). */
  notifications: Notifications;
  /** Each tenant's share of report work on this node, and the pool's share reports may hold. */
  reports: ReportGate;
}
