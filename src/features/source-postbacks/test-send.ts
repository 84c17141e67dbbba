import type { Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import { redactText } from "../../platform/log-redaction.js";
import { type AddressPolicy, send } from "../../platform/webhook-sender.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { renderUrl } from "../outgoing-webhooks/index.js";
import type { Postback } from "./schemas.js";
import { POSTBACK_VOCABULARY } from "./settings.js";

/**
 * The mark of a test postback: its click ids and conversion id start with it, which no real id
 * does (ours start with `clk_`/`cnv_`), as the outgoing webhooks' simulations are marked.
 */
export const TEST_ID_PREFIX = "test_";

/** What a test send answers: the request as sent (secrets masked) and what came back. */
export interface PostbackTestResult {
  request: { method: "GET"; url: string };
  response: { status: number; body: string } | null;
  error: string | null;
}

/**
 * The sample's values: the postback vocabulary's samples with made-up, marked ids, so a network
 * can tell the test from a conversion to pay for.
 */
function sampleValues(): Record<string, string | null> {
  const live = POSTBACK_VOCABULARY.live;
  return {
    ...live,
    clickId: `${TEST_ID_PREFIX}${live.clickId ?? "click"}`,
    conversionId: `${TEST_ID_PREFIX}${live.conversionId ?? "conversion"}`,
    externalClickId: `${TEST_ID_PREFIX}${live.externalClickId ?? "external"}`,
    externalId: `${TEST_ID_PREFIX}${live.externalId ?? "external"}`,
  };
}

/** The source's postback, 404 for a source the tenant does not have, 409 when none is configured. */
export async function postbackToTest(db: Queryable, tenantId: string, sourceId: number): Promise<Postback> {
  const [row] = await db.query<{ postback: Postback | null }>(
    "select postback from traffic_sources where tenant_id = $1 and id = $2",
    [tenantId, sourceId],
  );
  if (!row) throw ApiError.notFound("Traffic source", sourceId);
  if (row.postback === null) {
    throw ApiError.conflict("postback: this traffic source has no postback configured; save a postback URL first");
  }
  return row.postback;
}

/**
 * Sends one sample conversion to the postback's URL now, through the same guarded sender and
 * timeout as real postbacks (a GET), whether the postback is enabled or not. Writes no
 * conversion, postback or attempt, and is not metered: the caller's rate limit bounds it. The
 * URL answered is redacted as log lines are (secret-named query values, user info, long random
 * runs), since the template often carries the network's token.
 */
export async function sendTestPostback(
  postback: Postback,
  settings: { timeoutMs: number; policy: AddressPolicy },
): Promise<PostbackTestResult> {
  const { url, steered } = renderUrl(postback.url, sampleValues(), POSTBACK_VOCABULARY);
  const request = { method: "GET" as const, url: redactText(url) };
  if (steered !== null) return { request, response: null, error: redactText(steered.message) };
  const result = await send(url, "GET", null, settings);
  return {
    request,
    // The receiver's body, at most 4 KiB as the sender reads it, redacted too: it may echo the URL.
    response:
      result.response === null ? null : { status: result.response.status, body: redactText(result.response.body) },
    error: result.error === null ? null : redactText(result.error),
  };
}

/** The audit entry of a test send: who sent one, and whether it was taken (never the URL). */
export async function auditPostbackTest(
  db: Queryable,
  entry: { tenantId: string; actor: Actor; sourceId: number; result: PostbackTestResult; requestId: string; at: Date },
): Promise<void> {
  await recordAudit(db, {
    tenantId: entry.tenantId,
    actor: entry.actor,
    action: "traffic_source.postback_test",
    subject: { type: "traffic_source", id: String(entry.sourceId) },
    details: { status: entry.result.response?.status ?? null, delivered: entry.result.error === null },
    requestId: entry.requestId,
    at: entry.at,
  });
}
