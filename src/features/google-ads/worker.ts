import type { FastifyBaseLogger } from "fastify";
import type { Clock } from "../../platform/clock.js";
import type { Job } from "../../platform/jobs.js";
import { WakeableLoop } from "../../platform/wakeable-loop.js";
import { INTEGRATIONS_PER_ROUND, type Uploader } from "./uploader.js";

/**
 * How often the worker looks for queued conversions. Google asks for batches, not a request per
 * conversion: a minute gathers them, and is soon enough for conversions reported hours later.
 */
const POLL_MS = 60_000;

/** The worker role's upload loop: one round a minute (and at once while a round left integrations waiting). */
export class GoogleAdsWorker {
  private readonly loop: WakeableLoop;

  constructor(
    private readonly uploader: Uploader,
    private readonly clock: Clock,
    log: FastifyBaseLogger,
  ) {
    this.loop = new WakeableLoop(
      // Another round at once only when this one left integrations for later: conversions that
      // keep coming in gather for a minute rather than going one request each.
      async () => (await this.uploader.round(this.clock.now())).integrations >= INTEGRATIONS_PER_ROUND,
      POLL_MS,
      (error) => log.error({ err: error }, "the Google Ads upload round failed"),
    );
  }

  start(): void {
    this.loop.start();
  }

  stop(): Promise<void> {
    return this.loop.stop();
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
