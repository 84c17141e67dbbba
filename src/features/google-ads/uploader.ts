import type { FastifyBaseLogger } from "fastify";
import type { Db, Queryable } from "../../platform/db/index.js";
import { MINUTE_MS } from "../../platform/durations.js";
import { type FairShare, type FairTable, fairDueIds, unlimitedShare } from "../../platform/fair-claimer.js";
import { newId } from "../../platform/ids.js";
import { closeIssue, raiseIssue } from "../issues/index.js";
import type { ConversionStatus } from "../tracking/index.js";
import { type Credentials, fetchAccessToken, type GoogleAnswer, type GoogleEndpoints, ingestEvents } from "./client.js";
import { type CredentialBox, CredentialsUnreadableError } from "./credential-box.js";
import {
  type Consent,
  type Destination,
  eventIndexOf,
  ingestRequest,
  insideWindow,
  MAX_EVENTS_PER_REQUEST,
  type QueuedItem,
  refusalOf,
} from "./events.js";
import type { UploadStatus } from "./schemas.js";
import { notToldNote } from "./status.js";
import { TokenCache } from "./token-cache.js";

/** A failed upload is tried again this much later, while its clicks are inside their window. */
export const RETRY_INTERVAL_MS = 30 * MINUTE_MS;
/** Failed attempts in a row of one integration that open its 'Google Ads Upload Failed' issue. */
export const FAILURE_ISSUE_AFTER = 3;
export const FAILURE_ISSUE_KIND = "google_ads_upload_failed" as const;

/** How long one uploader holds an integration: longer than its slowest round of requests. */
const LEASE_MS = 10 * MINUTE_MS;
/** Integrations one round takes on; the rest wait for the next round. */
export const INTEGRATIONS_PER_ROUND = 50;
/** New batches one round sends per integration, so one busy source cannot hold the loop. */
const BATCHES_PER_INTEGRATION = 10;
/** Due retries one round makes per integration. */
const RETRIES_PER_INTEGRATION = 10;
/**
 * Google rejects a whole request for one bad event (no partial failure) and names the event:
 * it is refused and the rest sent again, at most this many times per attempt.
 */
const RESENDS_AFTER_REFUSAL = 3;

/**
 * The integrations with work, as the fair claim reads them: enabled, not leased, with a due
 * retry, or with queued conversions and no retry waiting. The tenant is the key; the integration
 * itself is the destination (its lease already keeps it to one upload at a time).
 */
const DUE_INTEGRATIONS: FairTable = {
  table: "google_ads_integrations g",
  due: `g.enabled and (g.locked_until is null or g.locked_until <= $1)
        and (exists (select 1 from google_ads_uploads u where u.traffic_source_id = g.traffic_source_id
                       and u.status = 'Retrying' and u.next_attempt_at <= $1)
             or (exists (select 1 from google_ads_items q where q.traffic_source_id = g.traffic_source_id
                           and q.upload_id is null and q.outcome = 'pending')
                 and not exists (select 1 from google_ads_uploads u
                                  where u.traffic_source_id = g.traffic_source_id and u.status = 'Retrying')))`,
  tenant: "g.tenant_id",
  destination: "g.traffic_source_id::text",
  order: "g.traffic_source_id",
  id: "g.traffic_source_id",
};

const emptySummary = (): UploadSummary => ({ integrations: 0, uploads: 0, accepted: 0, refused: 0, failed: 0 });

export interface IntegrationRow {
  traffic_source_id: string;
  tenant_id: string;
  source_name: string | null;
  account_id: string;
  login_account_id: string | null;
  client_id: string;
  sealed_secrets: string;
  conversion_actions: Record<string, string>;
  consent: Consent | null;
  consecutive_failures: number;
}

interface ItemRow {
  conversion_id: string;
  conversion_type: string;
  gclid: string;
  click_at: Date;
  occurred_at: Date;
  value: string | null;
  currency: string | null;
}

const toItem = (row: ItemRow): QueuedItem => ({
  conversionId: row.conversion_id,
  conversionType: row.conversion_type,
  gclid: row.gclid,
  clickAt: new Date(row.click_at),
  occurredAt: new Date(row.occurred_at),
  value: row.value === null ? null : Number(row.value),
  currency: row.currency,
});

const ITEM_COLUMNS = "conversion_id, conversion_type, gclid, click_at, occurred_at, value, currency";

export interface UploadSummary {
  integrations: number;
  uploads: number;
  accepted: number;
  refused: number;
  failed: number;
}

/** What one attempt at an upload came to, before it is written. */
interface AttemptOutcome {
  accepted: string[];
  refused: Map<string, string>;
  /** Not sent or not taken: waiting for the next attempt (or refused when their window ends). */
  pending: QueuedItem[];
  /** Google's last answer (or the token endpoint's); null when nothing was sent. */
  answer: GoogleAnswer | null;
  /** The attempt failed for a reason that may pass (network, 5xx, 429, token refresh, ...). */
  failed: boolean;
}

export interface UploaderDeps {
  db: Db;
  log: FastifyBaseLogger;
  endpoints: GoogleEndpoints;
  box: CredentialBox;
  tokens: TokenCache;
}

type Token = { ok: true; accessToken: string } | { ok: false; answer: GoogleAnswer };

/**
 * One integration's access for a round: the cached token, or one asked for once, when the first
 * batch needs it. A token Google refuses is forgotten, so the next attempt asks for a new one.
 */
class Access {
  #token: Promise<Token> | null = null;
  readonly #id: string;
  readonly #sealHash: string;

  constructor(
    private readonly deps: UploaderDeps,
    private readonly integration: IntegrationRow,
    private readonly now: Date,
  ) {
    this.#id = String(integration.traffic_source_id);
    this.#sealHash = TokenCache.sealHash(integration.sealed_secrets);
  }

  token(): Promise<Token> {
    this.#token ??= this.cachedOrFetched();
    return this.#token;
  }

  refused(): void {
    this.deps.tokens.forget(this.#id);
  }

  private async cachedOrFetched(): Promise<Token> {
    const cached = this.deps.tokens.get(this.#id, this.#sealHash);
    if (cached !== null) return { ok: true, accessToken: cached };
    const fetched = await this.fetch();
    if (fetched.ok) this.deps.tokens.set(this.#id, this.#sealHash, fetched.accessToken, fetched.expiresIn);
    return fetched;
  }

  private async fetch() {
    let credentials: Credentials;
    try {
      const secrets = this.deps.box.open(this.integration.sealed_secrets);
      credentials = { clientId: this.integration.client_id, ...secrets };
    } catch (error) {
      if (!(error instanceof CredentialsUnreadableError)) throw error;
      const answer: GoogleAnswer = {
        at: this.now.toISOString(),
        httpStatus: null,
        requestId: null,
        status: "CREDENTIALS_UNREADABLE",
        message: error.message,
      };
      return { ok: false as const, answer };
    }
    return fetchAccessToken(this.deps.endpoints, credentials, () => this.now);
  }
}

/**
 * Sends queued conversions to the Data Manager API. A round claims the integrations that have
 * work (a lease, so two workers never upload for one integration at once), retries their due
 * failed uploads, then sends their queue in batches of at most 2,000 events. While an
 * integration has a failed upload waiting for its retry, its new conversions wait too: Google
 * is not asked again before the 30 minutes are up.
 */
export class Uploader {
  constructor(private readonly deps: UploaderDeps) {}

  async round(now: Date): Promise<UploadSummary> {
    const summary = emptySummary();
    const claimed = await this.claim(now, INTEGRATIONS_PER_ROUND, unlimitedShare(INTEGRATIONS_PER_ROUND));
    for (const integration of claimed) await this.serveClaimed(integration, now, summary);
    return summary;
  }

  /**
   * Serves one claimed integration (its due retries, then its queue) and gives its lease back;
   * errors are logged, never thrown: the next round tries again.
   */
  async serveClaimed(integration: IntegrationRow, now: Date, summary: UploadSummary = emptySummary()): Promise<void> {
    summary.integrations += 1;
    try {
      await this.serve(integration, now, summary);
    } catch (error) {
      // The lease runs out and the next round tries again; what was sent is deduplicated by Google.
      this.deps.log.error(
        { err: error, trafficSourceId: integration.traffic_source_id },
        "uploading to Google Ads failed",
      );
    } finally {
      await this.deps.db
        .query("update google_ads_integrations set locked_until = null where traffic_source_id = $1", [
          integration.traffic_source_id,
        ])
        .catch(() => undefined);
    }
  }

  /**
   * Leases up to `limit` enabled integrations with a due retry, or with queued conversions and no
   * retry waiting, in one statement; `share` passes over the tenants that already have their
   * share of integrations being served (the worker's loop; a round claims with no share).
   */
  claim(now: Date, limit: number, share: FairShare): Promise<IntegrationRow[]> {
    const params: unknown[] = [now, new Date(now.getTime() + LEASE_MS)];
    const ids = fairDueIds(DUE_INTEGRATIONS, share, limit, params);
    return this.deps.db.query<IntegrationRow>(
      `update google_ads_integrations i set locked_until = $2
         from (${ids}) due
        where i.traffic_source_id = due.id
        returning i.traffic_source_id, i.tenant_id, i.account_id, i.login_account_id, i.client_id, i.sealed_secrets,
                  i.conversion_actions, i.consent, i.consecutive_failures,
                  (select s.name from traffic_sources s where s.id = i.traffic_source_id) as source_name`,
      params,
    );
  }

  private async serve(integration: IntegrationRow, now: Date, summary: UploadSummary): Promise<void> {
    const { db } = this.deps;
    // Real time, not `now` (a manual run may pass any instant): stop well inside the lease, so a
    // slow Google never lets a second worker take the integration while this one still sends.
    const stopAt = Date.now() + LEASE_MS / 2;
    const access = new Access(this.deps, integration, now);
    const sourceId = integration.traffic_source_id;
    const due = await db.query<{ id: string }>(
      `select id from google_ads_uploads where traffic_source_id = $1 and status = 'Retrying' and next_attempt_at <= $2
        order by next_attempt_at, id limit $3`,
      [sourceId, now, RETRIES_PER_INTEGRATION],
    );
    for (const { id } of due) {
      const rows = await db.query<ItemRow>(
        `select ${ITEM_COLUMNS} from google_ads_items where upload_id = $1 and outcome = 'pending'
          order by created_at, conversion_id`,
        [id],
      );
      const failed = await this.upload(integration, access, { id, fresh: false }, rows.map(toItem), now, summary);
      // Google is still failing: the rest of the queue waits for the next retry.
      if (failed || Date.now() > stopAt) return;
    }
    for (let batch = 0; batch < BATCHES_PER_INTEGRATION && Date.now() <= stopAt; batch++) {
      const rows = await db.query<ItemRow>(
        `select ${ITEM_COLUMNS} from google_ads_items where traffic_source_id = $1 and upload_id is null
            and outcome = 'pending'
          order by created_at, conversion_id limit $2`,
        [sourceId, MAX_EVENTS_PER_REQUEST],
      );
      if (rows.length === 0) return;
      const failed = await this.upload(
        integration,
        access,
        { id: newId("gup"), fresh: true },
        rows.map(toItem),
        now,
        summary,
      );
      if (failed || rows.length < MAX_EVENTS_PER_REQUEST) return;
    }
  }

  /** One attempt at one upload, written in one transaction; true when it failed and waits for a retry. */
  private async upload(
    integration: IntegrationRow,
    access: Access,
    upload: { id: string; fresh: boolean },
    items: QueuedItem[],
    now: Date,
    summary: UploadSummary,
  ): Promise<boolean> {
    const outcome = await this.attempt(integration, access, items, now);
    const status = await this.deps.db.transaction((tx) => record(tx, integration, upload, items, outcome, now));
    summary.uploads += 1;
    summary.accepted += outcome.accepted.length;
    summary.refused += outcome.refused.size;
    if (outcome.failed) {
      summary.failed += 1;
      this.deps.log.warn(
        {
          trafficSourceId: integration.traffic_source_id,
          uploadId: upload.id,
          status: outcome.answer?.status ?? null,
          httpStatus: outcome.answer?.httpStatus ?? null,
          message: outcome.answer?.message ?? null,
          uploadStatus: status,
        },
        "Google Ads upload failed",
      );
    }
    return outcome.failed && status === "Retrying";
  }

  /** Checks the events, then sends the valid ones, refusing any Google names and resending the rest. */
  private async attempt(
    integration: IntegrationRow,
    access: Access,
    items: QueuedItem[],
    now: Date,
  ): Promise<AttemptOutcome> {
    const destination: Destination = {
      accountId: integration.account_id,
      loginAccountId: integration.login_account_id,
      conversionActions: integration.conversion_actions,
      consent: integration.consent,
    };
    const refused = new Map<string, string>();
    let valid: QueuedItem[] = [];
    for (const item of items) {
      const reason = refusalOf(item, destination, now);
      if (reason === null) valid.push(item);
      else refused.set(item.conversionId, reason);
    }
    if (valid.length === 0) return { accepted: [], refused, pending: [], answer: null, failed: false };
    const token = await access.token();
    if (!token.ok) return { accepted: [], refused, pending: valid, answer: token.answer, failed: true };
    let answer: GoogleAnswer | null = null;
    for (let round = 0; round <= RESENDS_AFTER_REFUSAL && valid.length > 0; round++) {
      const result = await ingestEvents(
        this.deps.endpoints,
        token.accessToken,
        ingestRequest(destination, valid),
        () => now,
      );
      answer = result.answer;
      if (result.ok) return { accepted: valid.map((i) => i.conversionId), refused, pending: [], answer, failed: false };
      const named = new Map<number, string>();
      for (const violation of result.violations) {
        const index = eventIndexOf(violation.field);
        if (index !== null && index < valid.length && !named.has(index)) named.set(index, violation.description);
      }
      if (result.answer.httpStatus === 401) access.refused();
      // Not an event's fault (quota, outage, credentials, the destination itself): try it all again later.
      if (result.answer.status !== "INVALID_ARGUMENT" || named.size === 0) {
        return { accepted: [], refused, pending: valid, answer, failed: true };
      }
      for (const [index, description] of named) {
        const item = valid[index];
        if (item) refused.set(item.conversionId, `Refused by Google: ${description}`);
      }
      valid = valid.filter((_, index) => !named.has(index));
    }
    // Still refused after the resends: what is left waits for the retry like any failure.
    return { accepted: [], refused, pending: valid, answer, failed: valid.length > 0 };
  }
}

/** Writes an attempt: the upload, each item's outcome, the integration's failure count and its issue. */
async function record(
  tx: Queryable,
  integration: IntegrationRow,
  upload: { id: string; fresh: boolean },
  items: readonly QueuedItem[],
  outcome: AttemptOutcome,
  now: Date,
): Promise<UploadStatus> {
  const retryAt = new Date(now.getTime() + RETRY_INTERVAL_MS);
  const refused = new Map(outcome.refused);
  // A failed attempt is tried again only for clicks still inside their window at the retry.
  const waiting = outcome.failed ? outcome.pending.filter((item) => insideWindow(item, retryAt)) : [];
  if (outcome.failed) {
    const why = outcome.answer?.message ?? outcome.answer?.status ?? "the upload failed";
    for (const item of outcome.pending) {
      if (!waiting.includes(item)) refused.set(item.conversionId, `Not uploaded within the click's window: ${why}`);
    }
  }
  // The items are locked first, in the order the status hook locks them: a conversion rejected
  // or reversed while its event was on its way was withdrawn meanwhile (see withdrawnMeanwhile).
  const withdrawn = await withdrawnMeanwhile(tx, integration, items);
  if (upload.fresh) {
    await tx.query(
      `insert into google_ads_uploads (id, tenant_id, traffic_source_id, status, events, created_at, updated_at)
       values ($1, $2, $3, 'Retrying', $4, $5, $5)`,
      [upload.id, integration.tenant_id, integration.traffic_source_id, items.length, now],
    );
  }
  // Withdrawn meanwhile and not taken by Google: it stays withdrawn (and is not retried); taken,
  // it is accepted, with a note that Google was not told of the change.
  const writes = [
    ...outcome.accepted.map((id) => ({ id, outcome: "accepted", reason: null, note: withdrawn.get(id) ?? null })),
    ...[...refused].map(([id, reason]) => ({ id, outcome: "refused", reason, note: null })),
    ...waiting.map((i) => ({ id: i.conversionId, outcome: "pending", reason: null, note: null })),
  ];
  const kept = writes.filter((w) => w.outcome === "accepted" || !withdrawn.has(w.id));
  await tx.query(
    `update google_ads_items q set upload_id = $1, outcome = v.outcome, reason = v.reason,
            status_note = coalesce(v.note, q.status_note)
       from unnest($2::text[], $3::text[], $4::text[], $5::text[]) as v (conversion_id, outcome, reason, note)
      where q.conversion_id = v.conversion_id and q.traffic_source_id = $6`,
    [
      upload.id,
      kept.map((w) => w.id),
      kept.map((w) => w.outcome),
      kept.map((w) => w.reason),
      kept.map((w) => w.note),
      integration.traffic_source_id,
    ],
  );
  const stayWithdrawn = writes.filter((w) => w.outcome !== "accepted" && withdrawn.has(w.id)).map((w) => w.id);
  if (stayWithdrawn.length > 0) {
    await tx.query(
      "update google_ads_items set upload_id = $1 where conversion_id = any($2::text[]) and traffic_source_id = $3",
      [upload.id, stayWithdrawn, integration.traffic_source_id],
    );
  }
  const [counts] = await tx.query<{ accepted: number; refused: number; events: number }>(
    `select count(*) filter (where outcome = 'accepted')::int as accepted,
            count(*) filter (where outcome = 'refused')::int as refused, count(*)::int as events
       from google_ads_items where upload_id = $1`,
    [upload.id],
  );
  const accepted = counts?.accepted ?? 0;
  const stillWaiting = waiting.some((item) => !withdrawn.has(item.conversionId));
  // Nothing accepted and no retry left (every event refused, or withdrawn from a failed upload): Failed.
  const status: UploadStatus = stillWaiting
    ? "Retrying"
    : accepted === 0
      ? "Failed"
      : (counts?.refused ?? 0) === 0
        ? "Sent"
        : "Partly";
  await tx.query(
    `update google_ads_uploads set status = $2, events = $3, accepted = $4, refused = $5,
            attempts = attempts + case when $6 then 1 else 0 end, next_attempt_at = $7,
            response = coalesce($8::jsonb, response), updated_at = $9
      where id = $1`,
    [
      upload.id,
      status,
      counts?.events ?? items.length,
      accepted,
      counts?.refused ?? 0,
      outcome.answer !== null,
      status === "Retrying" ? retryAt : null,
      outcome.answer === null ? null : JSON.stringify(outcome.answer),
      now,
    ],
  );
  await followFailures(tx, integration, upload.id, outcome, now);
  return status;
}

/**
 * Locks the attempt's items and answers those withdrawn while the attempt was under way (their
 * conversion rejected or reversed), each with the note it takes if Google accepted it anyway.
 */
async function withdrawnMeanwhile(
  tx: Queryable,
  integration: IntegrationRow,
  items: readonly QueuedItem[],
): Promise<Map<string, string>> {
  if (items.length === 0) return new Map();
  const locked = await tx.query<{ conversion_id: string; outcome: string }>(
    `select conversion_id, outcome from google_ads_items
      where conversion_id = any($1::text[]) and traffic_source_id = $2 order by conversion_id for update`,
    [items.map((i) => i.conversionId), integration.traffic_source_id],
  );
  const ids = locked.filter((row) => row.outcome === "withdrawn").map((row) => row.conversion_id);
  if (ids.length === 0) return new Map();
  const changes = await tx.query<{ conversion_id: string; status: ConversionStatus; reason: string | null; at: Date }>(
    `select distinct on (conversion_id) conversion_id, status, reason, at from conversion_status_changes
      where tenant_id = $1 and conversion_id = any($2::text[]) order by conversion_id, at desc, id desc`,
    [integration.tenant_id, ids],
  );
  const notes = new Map(ids.map((id) => [id, "Rejected or reversed while it was being sent: Google was not told"]));
  for (const change of changes) {
    notes.set(change.conversion_id, notToldNote(change.status, new Date(change.at), change.reason));
  }
  return notes;
}

/** Counts failed attempts in a row; opens (or refreshes) the issue at the threshold, closes it on a success. */
async function followFailures(
  tx: Queryable,
  integration: IntegrationRow,
  uploadId: string,
  outcome: AttemptOutcome,
  now: Date,
): Promise<void> {
  const subject = { type: "traffic_source", id: String(integration.traffic_source_id) };
  // Nothing sent (every event refused before sending) says nothing about Google or the credentials.
  if (outcome.answer === null) return;
  if (!outcome.failed) {
    if (integration.consecutive_failures === 0) return;
    integration.consecutive_failures = 0;
    await tx.query("update google_ads_integrations set consecutive_failures = 0 where traffic_source_id = $1", [
      integration.traffic_source_id,
    ]);
    await closeIssue(
      tx,
      { tenantId: integration.tenant_id, kind: FAILURE_ISSUE_KIND, subject },
      `Upload ${uploadId} was accepted`,
      now,
    );
    return;
  }
  const [row] = await tx.query<{ consecutive_failures: number }>(
    `update google_ads_integrations set consecutive_failures = consecutive_failures + 1 where traffic_source_id = $1
     returning consecutive_failures`,
    [integration.traffic_source_id],
  );
  const failures = row?.consecutive_failures ?? integration.consecutive_failures + 1;
  integration.consecutive_failures = failures;
  if (failures < FAILURE_ISSUE_AFTER) return;
  const name = integration.source_name ?? `Traffic source ${integration.traffic_source_id}`;
  await raiseIssue(
    tx,
    {
      tenantId: integration.tenant_id,
      kind: FAILURE_ISSUE_KIND,
      severity: "error",
      title: `Google Ads Upload Failed: ${name}`,
      subject: { ...subject, name },
      details: {
        status: outcome.answer.status,
        httpStatus: outcome.answer.httpStatus,
        error: outcome.answer.message,
        uploadId,
        failedAttempts: failures,
        lastFailedAt: now.toISOString(),
      },
    },
    now,
  );
}
