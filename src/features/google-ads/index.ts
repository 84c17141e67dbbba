import type { FastifyBaseLogger } from "fastify";
import type { Config } from "../../config.js";
import type { Clock } from "../../platform/clock.js";
import type { Db } from "../../platform/db/index.js";
import type { Job } from "../../platform/jobs.js";
import type { SealedColumn } from "../../platform/reseal.js";
import type { SecretsKeyring } from "../../platform/sealed-box.js";
import { CredentialBox, GOOGLE_ADS_SECRETS_LABEL } from "./credential-box.js";
import { TokenCache } from "./token-cache.js";
import { Uploader } from "./uploader.js";
import { GoogleAdsWorker, googleAdsUploadJob } from "./worker.js";

export type { CredentialBox } from "./credential-box.js";

/** Where the OAuth secrets are stored sealed: what `npm run secrets:reseal` seals again. */
export const GOOGLE_ADS_SEALED_COLUMNS: readonly SealedColumn[] = [
  {
    table: "google_ads_integrations",
    key: "traffic_source_id",
    column: "sealed_secrets",
    label: GOOGLE_ADS_SECRETS_LABEL,
  },
];
export { googleAdsDeliveries } from "./deliveries.js";
export { googleAdsQueue } from "./hook.js";
export { GOOGLE_ADS_RETENTION } from "./retention.js";
export { googleAdsStatusHook } from "./status.js";

/** Google Ads offline conversions on this node: the credential box, the upload loop and its job. */
export interface GoogleAds {
  readonly box: CredentialBox;
  /** The worker role's loop (started with the other loops). */
  readonly worker: GoogleAdsWorker;
  /** `google-ads-upload`: the same round, for the scheduler and the admin surface. */
  readonly job: Job;
}

export function googleAds(deps: {
  db: Db;
  clock: Clock;
  log: FastifyBaseLogger;
  config: Config;
  /** The keys that seal the OAuth secrets at rest (SECRETS_KEY, shared by every node). */
  keyring: SecretsKeyring;
}): GoogleAds {
  const box = new CredentialBox(deps.keyring);
  const uploader = new Uploader({
    db: deps.db,
    log: deps.log,
    endpoints: deps.config.google,
    box,
    tokens: new TokenCache(),
  });
  return { box, worker: new GoogleAdsWorker(uploader, deps.clock, deps.log), job: googleAdsUploadJob(uploader) };
}
