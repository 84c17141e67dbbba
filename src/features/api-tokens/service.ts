import { randomSecret, sha256Hex } from "../../platform/crypto.js";
import type { Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import { newId } from "../../platform/ids.js";
import { type Actor, recordAudit } from "../audit/index.js";
import { isPermission } from "../auth/index.js";

export interface NewApiToken {
  name: string;
  expirationDate?: Date | undefined;
  scopes?: string[] | undefined;
}

export interface CreatedApiToken {
  id: string;
  name: string;
  scopes: string[];
  legacy: boolean;
  expirationDate: string;
  /** The raw key: returned once, never stored. */
  token: string;
}

const MIN_NAME = 4;
const ONE_YEAR_MS = 365 * 86_400_000;

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
): Promise<CreatedApiToken> {
  const name = input.name.trim();
  if (name.length < MIN_NAME) throw ApiError.validation("name", `must be at least ${MIN_NAME} characters`);
  const expiration = input.expirationDate ?? new Date(now.getTime() + ONE_YEAR_MS);
  if (expiration <= now) throw ApiError.validation("expirationDate", "must be in the future");
  if (expiration.getTime() > now.getTime() + ONE_YEAR_MS) {
    throw ApiError.validation("expirationDate", "must be at most one year after creation");
  }
  const scopes = [...new Set(input.scopes ?? [])];
  scopes.forEach((scope, index) => {
    if (!isPermission(scope)) throw ApiError.validation(`scopes[${index}]`, `'${scope}' is not a permission`);
  });
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
  await recordAudit(db, {
    tenantId,
    actor,
    action: "api_token.created",
    subject: { type: "api_token", id },
    details: { name, scopes, expirationDate: expiration.toISOString() },
    at: now,
  });
  return { id, name, scopes, legacy: scopes.length === 0, expirationDate: expiration.toISOString(), token };
}
