import type { Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { fetchAccessToken, type GoogleAnswer, type GoogleEndpoints, ingestEvents } from "./client.js";
import { type CredentialBox, CredentialsUnreadableError } from "./credential-box.js";
import { type Consent, type Destination, ingestRequest, type QueuedItem } from "./events.js";
import { sourceExists } from "./service.js";

/** What a connection test answers: whether Google took the sample, or why not. */
export interface ConnectionTest {
  ok: boolean;
  error: string | null;
}

/** The mark of the test's events: no real conversion id starts with it (ours start with `cnv_`). */
const TEST_ID_PREFIX = "test_";
// A made-up click id of Google's shape: validateOnly checks the request, never stores the event.
const TEST_GCLID = "test_gclid_0000000000";

interface Row {
  account_id: string;
  login_account_id: string | null;
  client_id: string;
  sealed_secrets: string;
  conversion_actions: Record<string, string>;
  consent: Consent | null;
}

/** The saved integration; 404 for a source the tenant does not have, then for one without an integration. */
async function integrationRow(db: Queryable, tenantId: string, sourceId: number): Promise<Row> {
  const [row] = await db.query<Row>(
    `select account_id, login_account_id, client_id, sealed_secrets, conversion_actions, consent
       from google_ads_integrations where tenant_id = $1 and traffic_source_id = $2`,
    [tenantId, sourceId],
  );
  if (row) return row;
  if (!(await sourceExists(db, tenantId, sourceId))) throw ApiError.notFound("Traffic source", sourceId);
  throw ApiError.notFound("Google Ads integration of traffic source", sourceId);
}

/** Google's refusal as one line: its status and message (already clipped and redacted by the client). */
const refusal = (what: string, answer: GoogleAnswer): string =>
  [what, answer.status, answer.message ?? (answer.httpStatus === null ? null : `HTTP ${answer.httpStatus}`)]
    .filter((part) => part !== null && part !== "")
    .join(": ");

/**
 * Tries the saved settings against Google without recording anything: the OAuth token exchange
 * with the stored credentials (a fresh one, not the upload loop's cached token), then one
 * events:ingest with `validateOnly: true` holding a sample event per mapped conversion action,
 * so the account, login account and actions are checked and no event is kept. Nothing is
 * written but the audit entry; the token is not cached.
 */
export async function testConnection(
  db: Queryable,
  tenantId: string,
  sourceId: number,
  deps: { box: CredentialBox; endpoints: GoogleEndpoints; now: () => Date },
): Promise<ConnectionTest> {
  const row = await integrationRow(db, tenantId, sourceId);
  const types = Object.keys(row.conversion_actions);
  if (types.length === 0) return { ok: false, error: "No conversion action is set: map a conversion type first" };
  let secrets: { clientSecret: string; refreshToken: string };
  try {
    secrets = deps.box.open(row.sealed_secrets);
  } catch (error) {
    if (error instanceof CredentialsUnreadableError) return { ok: false, error: error.message };
    throw error;
  }
  const token = await fetchAccessToken(deps.endpoints, { clientId: row.client_id, ...secrets }, deps.now);
  if (!token.ok) return { ok: false, error: refusal("The token exchange failed", token.answer) };
  const destination: Destination = {
    accountId: row.account_id,
    loginAccountId: row.login_account_id,
    conversionActions: row.conversion_actions,
    consent: row.consent,
  };
  const now = deps.now();
  const items: QueuedItem[] = types.map((type, i) => ({
    conversionId: `${TEST_ID_PREFIX}${now.getTime()}_${i}`,
    conversionType: type,
    gclid: TEST_GCLID,
    clickAt: new Date(now.getTime() - 60_000),
    occurredAt: now,
    value: null,
    currency: null,
  }));
  const request = { ...ingestRequest(destination, items), validateOnly: true };
  const result = await ingestEvents(deps.endpoints, token.accessToken, request, deps.now);
  if (result.ok) return { ok: true, error: null };
  const fields = result.violations.map((v) => `${v.field}: ${v.description}`).join("; ");
  const error = refusal("Google refused the sample", result.answer);
  return { ok: false, error: fields === "" ? error : `${error} (${fields})`.slice(0, 2000) };
}

/** The audit entry of a connection test: who ran one and whether it passed (never a credential). */
export async function auditConnectionTest(
  db: Queryable,
  entry: { tenantId: string; actor: Actor; sourceId: number; result: ConnectionTest; requestId: string; at: Date },
): Promise<void> {
  await recordAudit(db, {
    tenantId: entry.tenantId,
    actor: entry.actor,
    action: "google_ads.test",
    subject: { type: "traffic_source", id: String(entry.sourceId) },
    details: { ok: entry.result.ok },
    requestId: entry.requestId,
    at: entry.at,
  });
}
