import type { Static } from "typebox";
import type { Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { closeIssue } from "../issues/index.js";
import { type CredentialBox, CredentialsUnreadableError, type SealedSecrets } from "./credential-box.js";
import type { Consent } from "./events.js";
import type { GoogleAdsBody } from "./schemas.js";

/** An integration as the API shows it: never the client secret or the refresh token. */
export interface GoogleAdsIntegration {
  trafficSourceId: number;
  accountId: string;
  loginAccountId: string | null;
  /** `unreadable`: the stored secrets no longer open (their key left SECRETS_KEY); enter them again. */
  credentials: { clientId: string; unreadable?: true };
  conversionActions: Record<string, string>;
  consent: Consent | null;
  enabled: boolean;
  pendingEvents: number;
  createdAt: string;
  updatedAt: string;
}

interface IntegrationRow {
  traffic_source_id: string;
  account_id: string;
  login_account_id: string | null;
  client_id: string;
  sealed_secrets: string;
  conversion_actions: Record<string, string>;
  consent: Consent | null;
  enabled: boolean;
  pending: number;
  created_at: Date;
  updated_at: Date;
}

function toIntegration(row: IntegrationRow, box?: CredentialBox): GoogleAdsIntegration {
  const unreadable = box !== undefined && !box.opens(row.sealed_secrets);
  return {
    trafficSourceId: Number(row.traffic_source_id),
    accountId: row.account_id,
    loginAccountId: row.login_account_id,
    credentials: unreadable ? { clientId: row.client_id, unreadable: true } : { clientId: row.client_id },
    conversionActions: row.conversion_actions,
    consent: row.consent,
    enabled: row.enabled,
    pendingEvents: row.pending,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

// `sealed_secrets` only to tell whether they still open: toIntegration never copies them out.
const SELECT = `select i.traffic_source_id, i.account_id, i.login_account_id, i.client_id, i.sealed_secrets, i.conversion_actions,
       i.consent, i.enabled, i.created_at, i.updated_at,
       (select count(*)::int from google_ads_items q where q.traffic_source_id = i.traffic_source_id
          and q.upload_id is null and q.outcome = 'pending') as pending
  from google_ads_integrations i`;

export async function getIntegration(
  db: Queryable,
  tenantId: string,
  trafficSourceId: number,
  /** Given, the answer says whether the stored secrets still open. */
  box?: CredentialBox,
): Promise<GoogleAdsIntegration | null> {
  const [row] = await db.query<IntegrationRow>(`${SELECT} where i.tenant_id = $1 and i.traffic_source_id = $2`, [
    tenantId,
    trafficSourceId,
  ]);
  return row ? toIntegration(row, box) : null;
}

/** Whether the tenant has this traffic source (another tenant's is as unknown as a missing one). */
export async function sourceExists(db: Queryable, tenantId: string, trafficSourceId: number): Promise<boolean> {
  const rows = await db.query("select 1 from traffic_sources where tenant_id = $1 and id = $2", [
    tenantId,
    trafficSourceId,
  ]);
  return rows.length > 0;
}

export interface IntegrationChange {
  tenantId: string;
  actor: Actor;
  at: Date;
  requestId: string;
  box: CredentialBox;
}

const digits = (customerId: string) => customerId.replace(/-/g, "");

/**
 * The sealed secrets to store: those given, else the stored ones; the first save must give both
 * (400 naming the one missing). Stored ones that no longer open (their key left SECRETS_KEY) are
 * kept as they are by a save that disables the integration and gives none, so it can still be
 * switched off; any other save must give both again (409 naming them).
 */
async function sealedToStore(
  tx: Queryable,
  change: IntegrationChange,
  trafficSourceId: number,
  body: Static<typeof GoogleAdsBody>,
): Promise<string> {
  const { clientSecret, refreshToken } = body.credentials;
  if (clientSecret !== undefined && refreshToken !== undefined) return change.box.seal({ clientSecret, refreshToken });
  const [stored] = await tx.query<{ sealed_secrets: string }>(
    "select sealed_secrets from google_ads_integrations where tenant_id = $1 and traffic_source_id = $2 for update",
    [change.tenantId, trafficSourceId],
  );
  if (!stored) {
    const missing = clientSecret === undefined ? "credentials.clientSecret" : "credentials.refreshToken";
    throw ApiError.validation(missing, "is required when the integration is first saved");
  }
  let kept: SealedSecrets;
  try {
    kept = change.box.open(stored.sealed_secrets);
  } catch (error) {
    if (!(error instanceof CredentialsUnreadableError)) throw error;
    if (!body.enabled && clientSecret === undefined && refreshToken === undefined) return stored.sealed_secrets;
    const reason = "cannot be decrypted any more (its key is no longer in SECRETS_KEY): enter it again";
    throw new ApiError("conflict", `${error.message}, or disable the integration`, {
      errors: [
        { path: "credentials.clientSecret", message: reason },
        { path: "credentials.refreshToken", message: reason },
      ],
    });
  }
  return change.box.seal({
    clientSecret: clientSecret ?? kept.clientSecret,
    refreshToken: refreshToken ?? kept.refreshToken,
  });
}

/**
 * Creates or replaces the traffic source's integration. Secrets left out are kept (they cannot
 * be shown to be sent back). Null when the tenant has no such traffic source.
 */
export async function saveIntegration(
  tx: Queryable,
  trafficSourceId: number,
  body: Static<typeof GoogleAdsBody>,
  change: IntegrationChange,
): Promise<{ integration: GoogleAdsIntegration; created: boolean } | null> {
  if (!(await sourceExists(tx, change.tenantId, trafficSourceId))) return null;
  const sealed = await sealedToStore(tx, change, trafficSourceId, body);
  const actions = Object.fromEntries(
    Object.entries(body.conversionActions).filter((entry): entry is [string, string] => entry[1] !== undefined),
  );
  const [row] = await tx.query<{ created: boolean }>(
    `insert into google_ads_integrations (traffic_source_id, tenant_id, account_id, login_account_id, client_id,
       sealed_secrets, conversion_actions, consent, enabled, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10)
     on conflict (traffic_source_id) do update set account_id = excluded.account_id,
       login_account_id = excluded.login_account_id, client_id = excluded.client_id,
       sealed_secrets = excluded.sealed_secrets, conversion_actions = excluded.conversion_actions,
       consent = excluded.consent, enabled = excluded.enabled, updated_at = excluded.updated_at
     returning (xmax = 0) as created`,
    [
      trafficSourceId,
      change.tenantId,
      digits(body.accountId),
      body.loginAccountId ? digits(body.loginAccountId) : null,
      body.credentials.clientId,
      sealed,
      JSON.stringify(actions),
      body.consent ? JSON.stringify(body.consent) : null,
      body.enabled,
      change.at,
    ],
  );
  const created = row?.created === true;
  await recordAudit(tx, {
    tenantId: change.tenantId,
    actor: change.actor,
    action: created ? "google_ads.create" : "google_ads.update",
    subject: { type: "traffic_source", id: String(trafficSourceId) },
    // What changed, never the secrets: only whether new ones were given.
    details: {
      accountId: digits(body.accountId),
      enabled: body.enabled,
      conversionTypes: Object.keys(actions),
      newSecrets: body.credentials.clientSecret !== undefined || body.credentials.refreshToken !== undefined,
    },
    requestId: change.requestId,
    at: change.at,
  });
  const integration = await getIntegration(tx, change.tenantId, trafficSourceId, change.box);
  if (!integration) throw new Error("integration vanished after saving it");
  return { integration, created };
}

/** Deletes the integration with its queue and upload history; false when there was none. */
export async function deleteIntegration(
  tx: Queryable,
  trafficSourceId: number,
  change: Omit<IntegrationChange, "box">,
): Promise<boolean> {
  const rows = await tx.query(
    "delete from google_ads_integrations where tenant_id = $1 and traffic_source_id = $2 returning traffic_source_id",
    [change.tenantId, trafficSourceId],
  );
  if (rows.length === 0) return false;
  await recordAudit(tx, {
    tenantId: change.tenantId,
    actor: change.actor,
    action: "google_ads.delete",
    subject: { type: "traffic_source", id: String(trafficSourceId) },
    requestId: change.requestId,
    at: change.at,
  });
  // Nothing is left to fail: an open failure issue is resolved with it.
  await closeIssue(
    tx,
    {
      tenantId: change.tenantId,
      kind: "google_ads_upload_failed",
      subject: { type: "traffic_source", id: String(trafficSourceId) },
    },
    "The Google Ads integration was deleted",
    change.at,
  );
  return true;
}
