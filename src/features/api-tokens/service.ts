import { randomSecret, sha256Hex } from "../../platform/crypto.js";
import type { Queryable } from "../../platform/db/index.js";
import { selectPage } from "../../platform/db/paging.js";
import { containsPattern } from "../../platform/db/search.js";
import { ApiError } from "../../platform/http/errors.js";
import { newId } from "../../platform/ids.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { broadcastRevoked, isPermission, type Permission } from "../auth/index.js";
import { closeIssue } from "../issues/index.js";

export interface NewApiToken {
  name: string;
  expirationDate?: Date | undefined;
  scopes?: string[] | undefined;
}

export interface ApiToken {
  id: string;
  name: string;
  scopes: string[];
  legacy: boolean;
  createdAt: string;
  expirationDate: string;
  lastUsedAt: string | null;
  createdBy: { id: string; name: string } | null;
}

interface TokenRow {
  id: string;
  name: string;
  scopes: string[];
  legacy: boolean;
  created_at: Date;
  expiration_date: Date;
  last_used_at: Date | null;
  created_by: string | null;
  creator_name: string | null;
}

const COLUMNS = `k.id, k.name, k.scopes, k.legacy, k.created_at, k.expiration_date, k.last_used_at,
                 k.created_by, u.name as creator_name`;
const FROM = "api_tokens k left join users u on u.id = k.created_by";

function toToken(row: TokenRow): ApiToken {
  return {
    id: row.id,
    name: row.name,
    scopes: row.scopes,
    legacy: row.legacy,
    createdAt: new Date(row.created_at).toISOString(),
    expirationDate: new Date(row.expiration_date).toISOString(),
    lastUsedAt: row.last_used_at ? new Date(row.last_used_at).toISOString() : null,
    createdBy: row.created_by ? { id: row.created_by, name: row.creator_name ?? "" } : null,
  };
}

export const MIN_NAME = 4;
const ONE_YEAR_MS = 365 * 86_400_000;

/**
 * Checks the requested scopes: each must be a real permission (400 naming it) and, when a
 * caller's permissions are given, one the caller holds (403) — all before anything is stored.
 */
function checkScopes(scopes: string[], held: ReadonlySet<Permission> | undefined): string[] {
  scopes.forEach((scope, index) => {
    if (!isPermission(scope)) throw ApiError.validation(`scopes[${index}]`, `'${scope}' is not a permission`);
  });
  for (const scope of scopes) {
    if (held && !held.has(scope as Permission)) {
      throw ApiError.forbidden(`You cannot grant scope '${scope}': you do not hold that permission`);
    }
  }
  return [...new Set(scopes)];
}

/**
 * Issues a key for a tenant. Only the SHA-256 of the raw key is stored; a key without scopes
 * is legacy. Name at least 4 characters and unique on the tenant regardless of case; expiry
 * defaults to one year and may be neither past nor later than one year ahead.
 */
export async function createApiToken(
  db: Queryable,
  tenantId: string,
  input: NewApiToken,
  actor: Actor,
  now: Date,
  callerPermissions?: ReadonlySet<Permission>,
): Promise<ApiToken & { token: string }> {
  const name = input.name.trim();
  if (name.length < MIN_NAME) throw ApiError.validation("name", `must be at least ${MIN_NAME} characters`);
  const expiration = input.expirationDate ?? new Date(now.getTime() + ONE_YEAR_MS);
  if (expiration <= now) throw ApiError.validation("expirationDate", "must be in the future");
  if (expiration.getTime() > now.getTime() + ONE_YEAR_MS) {
    throw ApiError.validation("expirationDate", "must be at most one year after creation");
  }
  const scopes = checkScopes(input.scopes ?? [], callerPermissions);
  const taken = await db.query("select 1 from api_tokens where tenant_id = $1 and lower(name) = lower($2)", [
    tenantId,
    name,
  ]);
  if (taken.length > 0) throw ApiError.conflict(`An API token named '${name}' already exists`);
  const token = randomSecret();
  const id = newId("tok");
  await db.query(
    `insert into api_tokens (id, tenant_id, name, token_hash, scopes, legacy, expiration_date, created_at, created_by)
     values ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    [
      id,
      tenantId,
      name,
      sha256Hex(token),
      scopes,
      scopes.length === 0,
      expiration,
      now,
      actor.type === "user" ? actor.id : null,
    ],
  );
  // The raw token never reaches the audit log.
  await recordAudit(db, {
    tenantId,
    actor,
    action: "api_token.created",
    subject: { type: "api_token", id },
    details: { name, scopes, expirationDate: expiration.toISOString() },
    at: now,
  });
  const created = await getApiToken(db, tenantId, id);
  if (!created) throw new Error("token vanished after insert");
  return { ...created, token };
}

export async function listApiTokens(
  db: Queryable,
  tenantId: string,
  page: { offset: number; limit: number; search?: string | undefined },
): Promise<{ items: ApiToken[]; total: number }> {
  const { rows, total } = await selectPage<TokenRow>(
    db,
    {
      select: COLUMNS,
      from: FROM,
      where: "k.tenant_id = $1 and ($2::text is null or lower(k.name) like $2)",
      params: [tenantId, containsPattern(page.search)],
      orderBy: "k.created_at desc, k.id desc",
    },
    page,
  );
  return { items: rows.map(toToken), total };
}

export async function getApiToken(db: Queryable, tenantId: string, id: string): Promise<ApiToken | null> {
  const [row] = await db.query<TokenRow>(`select ${COLUMNS} from ${FROM} where k.tenant_id = $1 and k.id = $2`, [
    tenantId,
    id,
  ]);
  return row ? toToken(row) : null;
}

/**
 * Deletes a key of the tenant, closes its expiry issue and tells every node to drop it from
 * its cache; a no-op (false) when the tenant has no such key.
 */
export async function deleteApiToken(
  db: Queryable,
  tenantId: string,
  id: string,
  actor: Actor,
  now: Date,
): Promise<boolean> {
  const [row] = await db.query<{ name: string }>(
    "delete from api_tokens where tenant_id = $1 and id = $2 returning name",
    [tenantId, id],
  );
  if (!row) return false;
  await recordAudit(db, {
    tenantId,
    actor,
    action: "api_token.deleted",
    subject: { type: "api_token", id },
    details: { name: row.name },
    at: now,
  });
  await closeIssue(
    db,
    { tenantId, kind: "api_token_expiring", subject: { type: "api_token", id } },
    "the key was deleted",
    now,
  );
  await broadcastRevoked(db, { tokenId: id });
  return true;
}
