import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import { FairClaimer, type InFlight } from "../../platform/fair-claimer.js";
import type { Job } from "../../platform/jobs.js";
import type { IntegrationRow, Uploader } from "./uploader.js";

/**
 * How often the worker looks for queued conversions. Google asks for batches, not a request per
 * conversion: a minute gathers them, and is soon enough for conversions reported hours later.
 */
const POLL_MS = 60_000;
/** Integrations the worker serves at once; a slow answer from Google holds one, not the loop. */
export const UPLOAD_SLOTS = 8;
/** Of those, one tenant's: a tenant with many busy sources cannot hold the others' uploads back. */
export const UPLOAD_SLOTS_PER_TENANT = 2;

/**
 * The worker role's upload loop: claims the integrations that have work whenever a slot is free
 * (no tenant more than its share) and serves each in a slot of its own, so one integration that
 * Google answers slowly never holds up another tenant's; otherwise one look a minute.
 */
export class GoogleAdsWorker {
  private readonly claimer: FairClaimer<IntegrationRow>;

  constructor(
    private readonly uploader: Uploader,
    private readonly clock: Clock,
    log: FastifyBaseLogger,
  ) {
    this.claimer = new FairClaimer<IntegrationRow>({
      caps: {
        maxInFlight: UPLOAD_SLOTS,
        batch: UPLOAD_SLOTS,
        perTenant: UPLOAD_SLOTS_PER_TENANT,
        // An integration is served by one worker at a time anyway (its lease).
        perDestination: 1,
      },
      // No wake-up: conversions that keep coming in gather for a minute rather than going one
      // request each; a claim that came back full, or a slot freed while a tenant was at its
      // share, claims again at once.
      idleMs: POLL_MS,
      keysOf: (integration) => ({ tenant: integration.tenant_id, destination: String(integration.traffic_source_id) }),
      claim: async (limit, share) => {
        const ready = await this.uploader.claim(this.clock.now(), limit, share);
        return { claimed: ready.length, ready };
      },
      run: (integration) => this.uploader.serveClaimed(integration, this.clock.now()),
      onError: (error) => log.error({ err: error }, "the Google Ads upload round failed"),
    });
  }

  /** Integrations being served, per tenant. */
  get inFlight(): InFlight {
    return this.claimer.inFlight;
  }

  start(): void {
    this.claimer.start();
  }

  stop(): Promise<void> {
    return this.claimer.stop();
  }
}

/** The same round as a job, for the scheduler role and POST /api/admin/jobs/google-ads-upload/run. */
export function googleAdsUploadJob(uploader: Uploader): Job {
  return {
    name: "google-ads-upload",
    description:
      "Sends queued conversions to Google Ads (Data Manager API) in batches of at most 2,000 and retries failed uploads every 30 minutes",
    cron: "*/5 * * * *",
    run: async (now) => ({ ...(await uploader.round(now)) }),
  };
}
