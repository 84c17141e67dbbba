import { hashPassword, passwordNeedsRehash, sha256Hex } from "../../platform/crypto.js";
import type { Queryable } from "../../platform/db/index.js";
import { selectPage } from "../../platform/db/paging.js";
import { containsPattern } from "../../platform/db/search.js";
import { ApiError } from "../../platform/http/errors.js";
import { newId } from "../../platform/ids.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { isPermission, type TenantEntitlements } from "../auth/index.js";
import { recheckHeldEvents } from "../outgoing-webhooks/index.js";
import { newPostbackKey } from "./postback-key.js";

export interface Tenant {
  id: string;
  name: string;
  entitlements: TenantEntitlements;
  webhookAllowance: number | null;
  createdAt: string;
  updatedAt: string;
}

export interface User {
  id: string;
  tenantId: string;
  email: string;
  name: string;
  permissions: string[];
  disabled: boolean;
  createdAt: string;
}

interface TenantRow {
  id: string;
  name: string;
  entitlements: TenantEntitlements;
  webhook_allowance: number | null;
  created_at: Date;
  updated_at: Date;
}

interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  permissions: string[];
  disabled: boolean;
  created_at: Date;
}

export const DEFAULT_ENTITLEMENTS: TenantEntitlements = { apiTokens: true, clickWebhooks: false };
export const DEFAULT_WEBHOOK_ALLOWANCE = 100_000;

function toTenant(row: TenantRow): Tenant {
  return {
    id: row.id,
    name: row.name,
    entitlements: { ...DEFAULT_ENTITLEMENTS, ...row.entitlements },
    webhookAllowance: row.webhook_allowance === null ? null : Number(row.webhook_allowance),
    createdAt: new Date(row.created_at).toISOString(),
    updatedAt: new Date(row.updated_at).toISOString(),
  };
}

function toUser(row: UserRow): User {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    email: row.email,
    name: row.name,
    permissions: row.permissions,
    disabled: row.disabled,
    createdAt: new Date(row.created_at).toISOString(),
  };
}

export interface TenantInput {
  name: string;
  entitlements?: Partial<TenantEntitlements> | undefined;
  webhookAllowance?: number | null | undefined;
}

function requireName(name: string, field: string): string {
  const trimmed = name.trim();
  if (trimmed === "") throw ApiError.validation(field, "must not be blank");
  return trimmed;
}

/**
 * A tenant's money and time settings: the currency of values sent without one, the one reports
 * are in, and the IANA time zone reports read days in.
 */
export interface ReportingSettings {
  defaultCurrency: string;
  /** Null: reports are in defaultCurrency. */
  reportingCurrency: string | null;
  timeZone: string;
}

export async function getReportingSettings(db: Queryable, tenantId: string): Promise<ReportingSettings | null> {
  const [row] = await db.query<{ default_currency: string; reporting_currency: string | null; time_zone: string }>(
    "select default_currency, reporting_currency, time_zone from tenants where id = $1",
    [tenantId],
  );
  return row
    ? { defaultCurrency: row.default_currency, reportingCurrency: row.reporting_currency, timeZone: row.time_zone }
    : null;
}

/** The IANA time zone the tenant reads days in (its timeZone setting; UTC for no tenant). */
export async function tenantTimeZone(db: Queryable, tenantId: string): Promise<string> {
  return (await getReportingSettings(db, tenantId))?.timeZone ?? "UTC";
}

/**
 * Changes the given money and time settings (ISO 4217 codes and an IANA zone the caller has
 * checked; a null reporting currency resets it), audited.
 */
export async function setReportingSettings(
  db: Queryable,
  tenantId: string,
  change: Partial<ReportingSettings>,
  actor: Actor,
  at: Date,
): Promise<void> {
  if (Object.values(change).every((value) => value === undefined)) return;
  await db.query(
    `update tenants set default_currency = coalesce($2, default_currency),
       reporting_currency = case when $3::boolean then $4 else reporting_currency end,
       time_zone = coalesce($6, time_zone), updated_at = $5
     where id = $1`,
    [
      tenantId,
      change.defaultCurrency ?? null,
      change.reportingCurrency !== undefined,
      change.reportingCurrency ?? null,
      at,
      change.timeZone ?? null,
    ],
  );
  const audits = [
    ["tenant.default_currency_set", "defaultCurrency"],
    ["tenant.reporting_currency_set", "reportingCurrency"],
    ["tenant.time_zone_set", "timeZone"],
  ] as const;
  for (const [action, field] of audits) {
    if (change[field] === undefined) continue;
    const details = { [field]: change[field] };
    await recordAudit(db, { tenantId, actor, action, subject: { type: "tenant", id: tenantId }, details, at });
  }
}

/** Creates a tenant; the raw postback key is returned here only, its hash is what is stored. */
export async function createTenant(
  db: Queryable,
  input: TenantInput,
  actor: Actor,
  at: Date,
): Promise<Tenant & { postbackKey: string }> {
  const postbackKey = newPostbackKey();
  const entitlements = { ...DEFAULT_ENTITLEMENTS, ...input.entitlements };
  const [row] = await db.query<TenantRow>(
    `insert into tenants (id, name, postback_key_hash, entitlements, webhook_allowance, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $6) returning *`,
    [
      newId("ten"),
      requireName(input.name, "name"),
      sha256Hex(postbackKey),
      JSON.stringify(entitlements),
      input.webhookAllowance === undefined ? DEFAULT_WEBHOOK_ALLOWANCE : input.webhookAllowance,
      at,
    ],
  );
  if (!row) throw new Error("insert returned no row");
  const tenant = toTenant(row);
  await recordAudit(db, {
    tenantId: tenant.id,
    actor,
    action: "tenant.created",
    subject: { type: "tenant", id: tenant.id },
    at,
  });
  return { ...tenant, postbackKey };
}

export async function getTenant(db: Queryable, id: string): Promise<Tenant | null> {
  const [row] = await db.query<TenantRow>("select * from tenants where id = $1", [id]);
  return row ? toTenant(row) : null;
}

export async function updateTenant(
  db: Queryable,
  id: string,
  input: Partial<TenantInput>,
  actor: Actor,
  at: Date,
): Promise<Tenant> {
  const current = await getTenant(db, id);
  if (!current) throw ApiError.notFound("Tenant", id);
  const [row] = await db.query<TenantRow>(
    `update tenants set name = $2, entitlements = $3, webhook_allowance = $4, updated_at = $5
      where id = $1 returning *`,
    [
      id,
      input.name === undefined ? current.name : requireName(input.name, "name"),
      JSON.stringify({ ...current.entitlements, ...input.entitlements }),
      input.webhookAllowance === undefined ? current.webhookAllowance : input.webhookAllowance,
      at,
    ],
  );
  if (!row) throw ApiError.notFound("Tenant", id);
  if (input.webhookAllowance !== undefined && input.webhookAllowance !== current.webhookAllowance) {
    await recheckHeldEvents(db, id, at);
  }
  await recordAudit(db, {
    tenantId: id,
    actor,
    action: "tenant.updated",
    subject: { type: "tenant", id },
    details: { ...input },
    at,
  });
  return toTenant(row);
}

export async function listTenants(
  db: Queryable,
  page: { offset: number; limit: number; search?: string | undefined },
): Promise<{ items: Tenant[]; total: number }> {
  const { rows, total } = await selectPage<TenantRow>(
    db,
    {
      select: "*",
      from: "tenants",
      where: "($1::text is null or lower(name) like $1)",
      params: [containsPattern(page.search)],
      orderBy: "created_at, id",
    },
    page,
  );
  return { items: rows.map(toTenant), total };
}

export interface UserInput {
  email: string;
  password: string;
  name: string;
  permissions: string[];
}

function checkPermissions(permissions: string[]): string[] {
  permissions.forEach((value, index) => {
    if (!isPermission(value)) throw ApiError.validation(`permissions[${index}]`, `'${value}' is not a permission`);
  });
  return [...new Set(permissions)];
}

const MIN_PASSWORD = 10;

export async function createUser(
  db: Queryable,
  tenantId: string,
  input: UserInput,
  actor: Actor,
  at: Date,
): Promise<User> {
  if (!(await getTenant(db, tenantId))) throw ApiError.notFound("Tenant", tenantId);
  if (input.password.length < MIN_PASSWORD) {
    throw ApiError.validation("password", `must be at least ${MIN_PASSWORD} characters`);
  }
  const permissions = checkPermissions(input.permissions);
  const email = input.email.trim().toLowerCase();
  const taken = await db.query("select 1 from users where lower(email) = $1", [email]);
  if (taken.length > 0) throw ApiError.conflict(`A user with email '${email}' already exists`);
  const [row] = await db.query<UserRow>(
    `insert into users (id, tenant_id, email, name, password_hash, permissions, created_at, updated_at)
     values ($1, $2, $3, $4, $5, $6, $7, $7) returning *`,
    [
      newId("usr"),
      tenantId,
      email,
      requireName(input.name, "name"),
      await hashPassword(input.password),
      permissions,
      at,
    ],
  );
  if (!row) throw new Error("insert returned no row");
  await recordAudit(db, {
    tenantId,
    actor,
    action: "user.created",
    subject: { type: "user", id: row.id },
    details: { email, permissions },
    at,
  });
  return toUser(row);
}

export interface UserChanges {
  disabled?: boolean | undefined;
  name?: string | undefined;
  permissions?: string[] | undefined;
}

export async function updateUser(
  db: Queryable,
  id: string,
  changes: UserChanges,
  actor: Actor,
  at: Date,
): Promise<User> {
  const [current] = await db.query<UserRow>("select * from users where id = $1", [id]);
  if (!current) throw ApiError.notFound("User", id);
  const [row] = await db.query<UserRow>(
    "update users set disabled = $2, name = $3, permissions = $4, updated_at = $5 where id = $1 returning *",
    [
      id,
      changes.disabled ?? current.disabled,
      changes.name === undefined ? current.name : requireName(changes.name, "name"),
      changes.permissions === undefined ? current.permissions : checkPermissions(changes.permissions),
      at,
    ],
  );
  if (!row) throw ApiError.notFound("User", id);
  await recordAudit(db, {
    tenantId: row.tenant_id,
    actor,
    action: changes.disabled === true ? "user.disabled" : changes.disabled === false ? "user.enabled" : "user.updated",
    subject: { type: "user", id },
    details: { ...changes },
    at,
  });
  return toUser(row);
}

export async function listUsers(
  db: Queryable,
  tenantId: string,
  page: { offset: number; limit: number; search?: string | undefined },
): Promise<{ items: User[]; total: number }> {
  const { rows, total } = await selectPage<UserRow>(
    db,
    {
      select: "*",
      from: "users",
      where: "tenant_id = $1 and ($2::text is null or lower(name) like $2 or lower(email) like $2)",
      params: [tenantId, containsPattern(page.search)],
      orderBy: "created_at, id",
    },
    page,
  );
  return { items: rows.map(toUser), total };
}

export async function getUser(db: Queryable, tenantId: string, id: string): Promise<User | null> {
  const [row] = await db.query<UserRow>("select * from users where tenant_id = $1 and id = $2", [tenantId, id]);
  return row ? toUser(row) : null;
}

/**
 * After a successful sign-in with the password in hand: a hash made with older parameters is
 * replaced by one made with today's (crypto.ts). Only if the row still holds the hash that
 * was checked, so a password changed meanwhile is never overwritten. True when it was replaced.
 */
export async function rehashPasswordIfOutdated(
  db: Queryable,
  login: { id: string; passwordHash: string },
  password: string,
): Promise<boolean> {
  if (!passwordNeedsRehash(login.passwordHash)) return false;
  const rows = await db.query("update users set password_hash = $3 where id = $1 and password_hash = $2 returning id", [
    login.id,
    login.passwordHash,
    await hashPassword(password),
  ]);
  return rows.length > 0;
}

/** The user for a login: the stored hash is only ever read here. */
export async function findLogin(
  db: Queryable,
  email: string,
): Promise<{ id: string; tenantId: string; passwordHash: string; disabled: boolean } | null> {
  const [row] = await db.query<{ id: string; tenant_id: string; password_hash: string; disabled: boolean }>(
    "select id, tenant_id, password_hash, disabled from users where lower(email) = $1",
    [email.trim().toLowerCase()],
  );
  return row ? { id: row.id, tenantId: row.tenant_id, passwordHash: row.password_hash, disabled: row.disabled } : null;
}
