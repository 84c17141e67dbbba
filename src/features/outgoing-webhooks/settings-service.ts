import type { Queryable } from "../../platform/db/index.js";
import { Conditions, selectPage } from "../../platform/db/paging.js";
import { containsPattern } from "../../platform/db/search.js";
import { ApiError } from "../../platform/http/errors.js";
import { newId } from "../../platform/ids.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { closeIssue, closeIssuesOfSubject } from "../issues/index.js";
import { emitNotification } from "../notifications/index.js";
import { COMMISSION_TYPES, type ConversionType, isConversionType } from "../tracking/index.js";
import { announceEvents } from "./fan-out.js";
import { PlaceholderError, validateTemplate } from "./placeholders.js";
import type { WebhookStatus } from "./schemas.js";

/** At most 5 webhooks per traffic source and 5 affiliate-level, counted separately. */
export const WEBHOOKS_PER_SCOPE = 5;

export interface Webhook {
  id: string;
  name: string;
  url: string;
  method: "GET" | "POST";
  trafficSourceId: number | null;
  conversionTypes: string[];
  eventNames: Record<string, string>;
  attributionSources: string[];
  statusChanges: boolean;
  status: WebhookStatus;
  statusReason: string | null;
  createdAt: string;
  updatedAt: string;
}

export interface WebhookInput {
  name?: string | undefined;
  url?: string | undefined;
  method?: "GET" | "POST" | undefined;
  trafficSourceId?: number | null | undefined;
  conversionTypes?: string[] | undefined;
  eventNames?: Record<string, string> | undefined;
  attributionSources?: string[] | undefined;
  status?: "Enabled" | "Disabled" | undefined;
  statusChanges?: boolean | undefined;
}

interface WebhookRow {
  id: string;
  name: string;
  url: string;
  method: "GET" | "POST";
  traffic_source_id: string | null;
  conversion_types: string[];
  event_names: Record<string, string>;
  attribution_sources: string[];
  status_changes: boolean;
  status: WebhookStatus;
  status_reason: string | null;
  created_at: Date;
  updated_at: Date;
}

function toWebhook(row: WebhookRow): Webhook {
  return {
    id: row.id,
    name: row.name,
    url: row.url,
    method: row.method,
    trafficSourceId: row.traffic_source_id === null ? null : Number(row.traffic_source_id),
    conversionTypes: row.conversion_types,
    eventNames: row.event_names,
    attributionSources: row.attribution_sources,
    statusChanges: row.status_changes,
    status: row.status,
    statusReason: row.status_reason,
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

/** Who changes the settings and what the tenant's plan allows. */
export interface SettingsChange {
  tenantId: string;
  actor: Actor;
  at: Date;
  clickWebhooks: boolean;
}

/** The types a webhook may filter on: never commissions; Click only with click webhooks on. */
function checkType(type: string, path: string, clickWebhooks: boolean): ConversionType {
  if (!isConversionType(type)) throw ApiError.validation(path, `'${type}' is not a conversion type`);
  if (COMMISSION_TYPES.has(type)) throw ApiError.validation(path, `${type} is calculated and never fires webhooks`);
  if (type === "Click" && !clickWebhooks) {
    throw ApiError.validation(path, "Click is offered only when click webhooks are turned on for the account");
  }
  return type;
}

/** The type a simulation sends: one the webhook fires for. */
export function simulatedType(filter: string[]): ConversionType {
  const first = filter.find(isConversionType);
  return first ?? "Deposit";
}

export function checkSimulatedType(type: ConversionType, clickWebhooks: boolean): void {
  checkType(type, "conversionType", clickWebhooks);
}

async function checkInput(db: Queryable, input: WebhookInput, change: SettingsChange): Promise<void> {
  if (input.name !== undefined && input.name.trim() === "") throw ApiError.validation("name", "must not be blank");
  if (input.url !== undefined) {
    try {
      validateTemplate(input.url);
    } catch (error) {
      if (error instanceof PlaceholderError) throw ApiError.invalid("url", error.message);
      throw error;
    }
  }
  for (const type of input.conversionTypes ?? []) checkType(type, "conversionTypes", change.clickWebhooks);
  for (const [type, name] of Object.entries(input.eventNames ?? {})) {
    checkType(type, `eventNames.${type}`, change.clickWebhooks);
    if (name.trim() === "") throw ApiError.validation(`eventNames.${type}`, "must not be blank");
  }
  if (input.trafficSourceId !== undefined && input.trafficSourceId !== null) {
    const [source] = await db.query("select 1 from traffic_sources where tenant_id = $1 and id = $2", [
      change.tenantId,
      input.trafficSourceId,
    ]);
    if (!source) throw ApiError.validation("trafficSourceId", `Traffic source ${input.trafficSourceId} does not exist`);
  }
}

/** Refuses (409) a sixth webhook in the same scope; the tenant row lock serializes concurrent saves. */
async function checkLimit(db: Queryable, tenantId: string, sourceId: number | null, exceptId: string | null) {
  await db.query("select 1 from tenants where id = $1 for update", [tenantId]);
  const [row] = await db.query<{ n: number }>(
    `select count(*)::int as n from outgoing_webhooks
      where tenant_id = $1 and traffic_source_id is not distinct from $2 and id is distinct from $3`,
    [tenantId, sourceId, exceptId],
  );
  if ((row?.n ?? 0) >= WEBHOOKS_PER_SCOPE) {
    const scope = sourceId === null ? "affiliate-level webhooks" : `webhooks on traffic source ${sourceId}`;
    throw ApiError.conflict(`The account already has ${WEBHOOKS_PER_SCOPE} ${scope}, the most allowed`);
  }
}

function normalizedEventNames(names: Record<string, string> | undefined): string {
  return JSON.stringify(Object.fromEntries(Object.entries(names ?? {}).map(([k, v]) => [k, v.trim()])));
}

export interface NewWebhookInput extends WebhookInput {
  name: string;
  url: string;
  method: "GET" | "POST";
}

export async function createWebhook(db: Queryable, input: NewWebhookInput, change: SettingsChange): Promise<Webhook> {
  await checkInput(db, input, change);
  const sourceId = input.trafficSourceId ?? null;
  await checkLimit(db, change.tenantId, sourceId, null);
  const [row] = await db.query<WebhookRow>(
    `insert into outgoing_webhooks (id, tenant_id, name, url, method, traffic_source_id, conversion_types, event_names,
       attribution_sources, status, created_at, updated_at, status_changes)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $11, $12) returning *`,
    [
      newId("wh"),
      change.tenantId,
      input.name.trim(),
      input.url.trim(),
      input.method,
      sourceId,
      input.conversionTypes ?? [],
      normalizedEventNames(input.eventNames),
      input.attributionSources ?? [],
      input.status ?? "Enabled",
      change.at,
      input.statusChanges ?? false,
    ],
  );
  if (!row) throw new Error("insert returned no row");
  const webhook = toWebhook(row);
  await audit(db, change, "created", webhook.id, { name: webhook.name });
  return webhook;
}

export async function getWebhook(db: Queryable, tenantId: string, id: string): Promise<Webhook | null> {
  const [row] = await db.query<WebhookRow>("select * from outgoing_webhooks where tenant_id = $1 and id = $2", [
    tenantId,
    id,
  ]);
  return row ? toWebhook(row) : null;
}

export async function listWebhooks(
  db: Queryable,
  tenantId: string,
  query: {
    offset: number;
    limit: number;
    trafficSourceId?: number | undefined;
    level?: "affiliate" | "trafficSource" | undefined;
    status?: WebhookStatus | undefined;
    search?: string | undefined;
  },
): Promise<{ items: Webhook[]; total: number }> {
  const where = new Conditions("w.tenant_id = $1", tenantId)
    .add("w.traffic_source_id = $", query.trafficSourceId)
    .when(query.level === "affiliate", "w.traffic_source_id is null")
    .when(query.level === "trafficSource", "w.traffic_source_id is not null")
    .add("w.status = $", query.status)
    .add("lower(w.name) like $", containsPattern(query.search) ?? undefined);
  const { rows, total } = await selectPage<WebhookRow>(
    db,
    {
      select: "w.*",
      from: "outgoing_webhooks w",
      where: where.sql,
      params: where.params,
      orderBy: "w.created_at, w.id",
    },
    query,
  );
  return { items: rows.map(toWebhook), total };
}

export async function updateWebhook(
  db: Queryable,
  id: string,
  input: WebhookInput,
  change: SettingsChange,
): Promise<Webhook | null> {
  const [existing] = await db.query<WebhookRow>(
    "select * from outgoing_webhooks where tenant_id = $1 and id = $2 for update",
    [change.tenantId, id],
  );
  if (!existing) return null;
  await checkInput(db, input, change);
  const current = existing.traffic_source_id === null ? null : Number(existing.traffic_source_id);
  if (input.trafficSourceId !== undefined && input.trafficSourceId !== current) {
    await checkLimit(db, change.tenantId, input.trafficSourceId, id);
  }
  const sets: string[] = ["updated_at = $3"];
  const values: unknown[] = [change.tenantId, id, change.at];
  const set = (column: string, value: unknown) => {
    values.push(value);
    sets.push(`${column} = $${values.length}`);
  };
  if (input.name !== undefined) set("name", input.name.trim());
  if (input.url !== undefined) set("url", input.url.trim());
  if (input.method !== undefined) set("method", input.method);
  if (input.trafficSourceId !== undefined) set("traffic_source_id", input.trafficSourceId);
  if (input.conversionTypes !== undefined) set("conversion_types", input.conversionTypes);
  if (input.eventNames !== undefined) set("event_names", normalizedEventNames(input.eventNames));
  if (input.attributionSources !== undefined) set("attribution_sources", input.attributionSources);
  if (input.statusChanges !== undefined) set("status_changes", input.statusChanges);
  if (input.status !== undefined && input.status !== existing.status) {
    set("status", input.status);
    // The caller's choice replaces whatever reason the service gave for a suspension, and
    // the five days of failures that suspend a webhook count again from here. Only a real
    // change does: resending the current status must not restart the count.
    set("status_reason", null);
    set("failing_since", null);
  }
  const [row] = await db.query<WebhookRow>(
    `update outgoing_webhooks set ${sets.join(", ")} where tenant_id = $1 and id = $2 returning *`,
    values,
  );
  if (!row) return null;
  const webhook = toWebhook(row);
  if (webhook.status === "Enabled" && existing.status !== "Enabled") {
    // Events held back while it was suspended or disabled go out now.
    await db.query(
      `update webhook_events set status = 'Queued', next_attempt_at = $3
        where tenant_id = $1 and webhook_id = $2 and status = 'Paused'`,
      [change.tenantId, id, change.at],
    );
    await announceEvents(db, change.tenantId);
  }
  if (webhook.status === "Enabled" && existing.status === "Suspended") {
    const data = { id, name: webhook.name, status: webhook.status, statusReason: webhook.statusReason };
    await emitNotification(db, change.tenantId, "outgoing_webhook.enabled", data, change.at);
  }
  if (input.url !== undefined && input.url.trim() !== existing.url) {
    // A URL saved now has passed validation: the old one's problem is gone.
    await closeIssue(
      db,
      { tenantId: change.tenantId, kind: "webhook_url_invalid", subject: { type: "outgoing_webhook", id } },
      "The URL was changed",
      change.at,
    );
  }
  if (webhook.status === "Disabled" && existing.status !== "Disabled") {
    await closeWebhookIssues(db, id, change, "The webhook was disabled");
  }
  await audit(db, change, "updated", id, { fields: Object.keys(input) });
  return webhook;
}

export async function deleteWebhook(db: Queryable, id: string, change: SettingsChange): Promise<boolean> {
  const rows = await db.query("delete from outgoing_webhooks where tenant_id = $1 and id = $2 returning 1", [
    change.tenantId,
    id,
  ]);
  if (rows.length === 0) return false;
  await closeWebhookIssues(db, id, change, "The webhook was deleted");
  await audit(db, change, "deleted", id, {});
  return true;
}

/** A deleted or disabled webhook sends nothing: its failure and bad-URL issues have no cause left. */
async function closeWebhookIssues(db: Queryable, id: string, change: SettingsChange, resolution: string) {
  await closeIssuesOfSubject(
    db,
    {
      tenantId: change.tenantId,
      kinds: ["outgoing_webhook_failed", "webhook_url_invalid"],
      subject: { type: "outgoing_webhook", id },
    },
    resolution,
    change.at,
  );
}

async function audit(
  db: Queryable,
  change: SettingsChange,
  verb: string,
  id: string,
  details: Record<string, unknown>,
) {
  await recordAudit(db, {
    tenantId: change.tenantId,
    actor: change.actor,
    action: `outgoing_webhook.${verb}`,
    subject: { type: "outgoing_webhook", id },
    details,
    at: change.at,
  });
}
