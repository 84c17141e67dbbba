import { randomSecret, sha256Hex } from "../../platform/crypto.js";
import { isUniqueViolation, type Queryable } from "../../platform/db/index.js";
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
    createdAt: row.created_at.toISOString(),
    expirationDate: row.expiration_date.toISOString(),
    lastUsedAt: row.last_used_at ? row.last_used_at.toISOString() : null,
    createdBy: row.created_by ? { id: row.created_by, name: row.creator_name ?? "" } : null,
  };
}

export const MIN_NAME = 4;
const NAME_INDEX = "api_tokens_name_unique";

/**
 * "One year after creation" (the default expiry and the latest one allowed) is a calendar
 * year in UTC: the same month, day and time of day next year, so a year across 29 February is
 * 366 days. A key created on 29 February gets 28 February of the next year, never 1 March: the
 * year never runs past the creation date's month.
 */
function oneYearAfter(created: Date): Date {
  const next = new Date(created);
  next.setUTCFullYear(created.getUTCFullYear() + 1);
  // 29 February rolled over to 1 March: day 0 of March is the last day of February.
  if (next.getUTCMonth() !== created.getUTCMonth()) next.setUTCDate(0);
  return next;
}

const isNameTaken = (error: unknown) => isUniqueViolation(error, NAME_INDEX);

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
 * Refuses (409) a tenant at its key limit. The tenant's row is locked first, so two concurrent
 * creates cannot both see room for one more (`db` must be a transaction for the lock to hold).
 */
async function checkKeyCount(db: Queryable, tenantId: string, maxKeys: number, now: Date): Promise<void> {
  await db.query("select 1 from tenants where id = $1 for update", [tenantId]);
  const [row] = await db.query<{ n: number }>(
    "select count(*)::int as n from api_tokens where tenant_id = $1 and expiration_date > $2",
    [tenantId, now],
  );
  if ((row?.n ?? 0) >= maxKeys) {
    throw ApiError.conflict(
      `This tenant already has ${maxKeys} unexpired API keys, the most allowed; delete one before creating another`,
    );
  }
}

/**
 * Issues a key for a tenant. Only the SHA-256 of the raw key is stored; a key without scopes
 * is legacy. Name at least 4 characters and unique on the tenant regardless of case (409, also
 * when a concurrent create wins the race); expiry defaults to one calendar year (`oneYearAfter`)
 * and may be neither past nor later than that. With `maxKeys`, a tenant already holding that
 * many unexpired keys gets 409: expired keys stay listed until deleted but no longer count, and
 * revoked (deleted) keys are gone.
 */
export async function createApiToken(
  db: Queryable,
  tenantId: string,
  input: NewApiToken,
  actor: Actor,
  now: Date,
  callerPermissions?: ReadonlySet<Permission>,
  maxKeys?: number,
): Promise<ApiToken & { token: string }> {
  const name = input.name.trim();
  if (name.length < MIN_NAME) throw ApiError.validation("name", `must be at least ${MIN_NAME} characters`);
  const latest = oneYearAfter(now);
  const expiration = input.expirationDate ?? latest;
  if (expiration <= now) throw ApiError.validation("expirationDate", "must be in the future");
  if (expiration > latest) {
    throw ApiError.validation("expirationDate", "must be at most one year after creation");
  }
  const scopes = checkScopes(input.scopes ?? [], callerPermissions);
  if (maxKeys !== undefined) await checkKeyCount(db, tenantId, maxKeys, now);
  const taken = await db.query("select 1 from api_tokens where tenant_id = $1 and lower(name) = lower($2)", [
    tenantId,
    name,
  ]);
  const nameTaken = () => ApiError.conflict(`An API token named '${name}' already exists`);
  if (taken.length > 0) throw nameTaken();
  const token = randomSecret();
  const id = newId("tok");
  try {
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
  } catch (error) {
    // A concurrent create of the same name passed the check above too and committed first:
    // the unique index refuses this insert, and the caller gets the same 409 as the check gives.
    // The failed statement has aborted the transaction, so nothing more is run in it.
    if (isNameTaken(error)) throw nameTaken();
    throw error;
  }
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
