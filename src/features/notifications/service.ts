import { isIP } from "node:net";
import type { Queryable } from "../../platform/db/index.js";
import { selectPage } from "../../platform/db/paging.js";
import { ApiError } from "../../platform/http/errors.js";
import { newId } from "../../platform/ids.js";
import type { AddressPolicy } from "../../platform/webhook-sender.js";
import { type Actor, recordAudit } from "../audit/index.js";
import type { NotificationType } from "./events.js";
import { newSigningSecret, type SecretBox } from "./signing.js";

/** Operational webhooks a tenant may register: enough for every system it runs, bounded fan-out. */
export const WEBHOOKS_PER_TENANT = 20;
/** How long a rotated-out secret keeps signing alongside the new one. */
export const SECRET_OVERLAP_MS = 24 * 3_600_000;

export interface NotificationWebhook {
  id: string;
  url: string;
  description: string | null;
  events: string[];
  previousSecretExpiresAt: string | null;
  /** The stored signing secret no longer opens (its key left SECRETS_KEY): rotate it. */
  secretUnreadable?: true;
  createdAt: string;
  updatedAt: string;
}

interface WebhookRow {
  id: string;
  url: string;
  description: string | null;
  event_types: string[];
  previous_secret_until: Date | null;
  secret_enc: string;
  created_at: Date;
  updated_at: Date;
}

// `secret_enc` only to tell whether it still opens: toWebhook never copies it out.
const COLUMNS = "id, url, description, event_types, previous_secret_until, secret_enc, created_at, updated_at";

/** With `box`, the answer says whether the stored secret still opens. */
function toWebhook(row: WebhookRow, at: Date, box?: SecretBox): NotificationWebhook {
  const until = row.previous_secret_until === null ? null : new Date(row.previous_secret_until);
  const unreadable = box !== undefined && !box.opens(row.secret_enc);
  return {
    ...(unreadable ? { secretUnreadable: true as const } : {}),
    id: row.id,
    url: row.url,
    description: row.description,
    events: row.event_types,
    // A lapsed previous secret signs nothing: it is not worth mentioning.
    previousSecretExpiresAt: until !== null && until > at ? until.toISOString() : null,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** Who changes the registrations, and the parts needed to check URLs and keep secrets. */
export interface RegistrationChange {
  tenantId: string;
  actor: Actor;
  at: Date;
  policy: AddressPolicy;
  box: SecretBox;
}

export interface WebhookInput {
  url?: string | undefined;
  events?: NotificationType[] | undefined;
  description?: string | null | undefined;
}

/**
 * An operational webhook receives signed account data, so it must use https; plain http is
 * accepted only for a host on WEBHOOK_ALLOWED_HOSTS (a receiver inside the deployment's own
 * network, or a test). A private or reserved address literal is refused here as it would be at
 * send time.
 */
export function checkUrl(raw: string, policy: AddressPolicy): string {
  const value = raw.trim();
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw ApiError.invalid("url", `url '${value}' is not an absolute URL`);
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  if (url.protocol === "http:") {
    if (!policy.exempts(host)) {
      throw ApiError.invalid(
        "url",
        `url must use https; plain http is accepted only for hosts in WEBHOOK_ALLOWED_HOSTS`,
      );
    }
  } else if (url.protocol !== "https:") {
    throw ApiError.invalid("url", `url must use https, not '${url.protocol.replace(/:$/, "")}'`);
  }
  if (host === "") throw ApiError.invalid("url", "url has no host");
  if (isIP(host) !== 0 && policy.blocks(host, host)) {
    throw ApiError.invalid("url", `url points at ${host}, a private or reserved address`);
  }
  return value;
}

function cleanDescription(description: string | null | undefined): string | null | undefined {
  if (description === undefined || description === null) return description;
  const trimmed = description.trim();
  return trimmed === "" ? null : trimmed;
}

async function audit(db: Queryable, change: RegistrationChange, verb: string, id: string, details = {}) {
  await recordAudit(db, {
    tenantId: change.tenantId,
    actor: change.actor,
    action: `notification_webhook.${verb}`,
    subject: { type: "notification_webhook", id },
    details,
    at: change.at,
  });
}

/** Registers a webhook; the answer carries its signing secret, which is never shown again. */
export async function createNotificationWebhook(
  db: Queryable,
  input: WebhookInput & { url: string },
  change: RegistrationChange,
): Promise<NotificationWebhook & { secret: string }> {
  const url = checkUrl(input.url, change.policy);
  // The tenant row lock serializes concurrent registrations, so the limit holds.
  await db.query("select 1 from tenants where id = $1 for update", [change.tenantId]);
  const [count] = await db.query<{ n: number }>(
    "select count(*)::int as n from notification_webhooks where tenant_id = $1",
    [change.tenantId],
  );
  if ((count?.n ?? 0) >= WEBHOOKS_PER_TENANT) {
    throw ApiError.conflict(`The account already has ${WEBHOOKS_PER_TENANT} operational webhooks, the most allowed`);
  }
  const secret = newSigningSecret();
  const [row] = await db.query<WebhookRow>(
    `insert into notification_webhooks (id, tenant_id, url, description, event_types, secret_enc, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $7) returning ${COLUMNS}`,
    [
      newId("wh"),
      change.tenantId,
      url,
      cleanDescription(input.description) ?? null,
      input.events ?? [],
      change.box.seal(secret),
      change.at,
    ],
  );
  if (!row) throw new Error("insert returned no row");
  await audit(db, change, "created", row.id, { events: row.event_types });
  return { ...toWebhook(row, change.at), secret };
}

export async function getNotificationWebhook(
  db: Queryable,
  tenantId: string,
  id: string,
  at: Date,
  box?: SecretBox,
): Promise<NotificationWebhook | null> {
  const [row] = await db.query<WebhookRow>(
    `select ${COLUMNS} from notification_webhooks where tenant_id = $1 and id = $2`,
    [tenantId, id],
  );
  return row ? toWebhook(row, at, box) : null;
}

export async function listNotificationWebhooks(
  db: Queryable,
  tenantId: string,
  page: { offset: number; limit: number },
  at: Date,
  box?: SecretBox,
): Promise<{ items: NotificationWebhook[]; total: number }> {
  const { rows, total } = await selectPage<WebhookRow>(
    db,
    {
      select: COLUMNS,
      from: "notification_webhooks",
      where: "tenant_id = $1",
      params: [tenantId],
      orderBy: "created_at, id",
    },
    page,
  );
  return { items: rows.map((row) => toWebhook(row, at, box)), total };
}

export async function updateNotificationWebhook(
  db: Queryable,
  id: string,
  input: WebhookInput,
  change: RegistrationChange,
): Promise<NotificationWebhook | null> {
  const url = input.url === undefined ? null : checkUrl(input.url, change.policy);
  const description = cleanDescription(input.description);
  const [row] = await db.query<WebhookRow>(
    `update notification_webhooks
        set url = coalesce($3, url),
            event_types = coalesce($4, event_types),
            description = case when $5 then $6 else description end,
            updated_at = $7
      where tenant_id = $1 and id = $2 returning ${COLUMNS}`,
    [change.tenantId, id, url, input.events ?? null, description !== undefined, description ?? null, change.at],
  );
  if (!row) return null;
  await audit(db, change, "updated", id, { fields: Object.keys(input) });
  return toWebhook(row, change.at, change.box);
}

/** Deletes a webhook with its messages and their history; messages not yet sent are dropped. */
export async function deleteNotificationWebhook(db: Queryable, id: string, change: RegistrationChange) {
  const rows = await db.query("delete from notification_webhooks where tenant_id = $1 and id = $2 returning 1", [
    change.tenantId,
    id,
  ]);
  if (rows.length === 0) return false;
  await audit(db, change, "deleted", id);
  return true;
}

/**
 * Issues a new secret. The one it replaces keeps signing alongside it for 24 hours, so
 * receivers can switch without losing a message; a secret already rotated out before that is
 * dropped at once (two rotations within a day leave only the last two secrets).
 */
export async function rotateSecret(
  db: Queryable,
  id: string,
  change: RegistrationChange,
): Promise<(NotificationWebhook & { secret: string }) | null> {
  const secret = newSigningSecret();
  const [row] = await db.query<WebhookRow>(
    `update notification_webhooks
        set previous_secret_enc = secret_enc, previous_secret_until = $3, secret_enc = $4, updated_at = $5
      where tenant_id = $1 and id = $2 returning ${COLUMNS}`,
    [change.tenantId, id, new Date(change.at.getTime() + SECRET_OVERLAP_MS), change.box.seal(secret), change.at],
  );
  if (!row) return null;
  await audit(db, change, "secret_rotated", id);
  return { ...toWebhook(row, change.at), secret };
}
