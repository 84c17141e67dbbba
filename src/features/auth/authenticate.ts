import type { Clock } from "../../platform/clock.js";
import type { Queryable } from "../../platform/db/index.js";
import { ApiError } from "../../platform/http/errors.js";
import type { ApiKeyVerifier } from "./api-key-verifier.js";
import type { LastUsedRecorder } from "./last-used.js";
import { effectivePermissions } from "./permissions.js";
import type { Principal, TenantEntitlements, UserPrincipal } from "./principal.js";
import type { SignedInPeople } from "./signed-in-people.js";

// Names under which clients commonly try to pass a credential in the URL; refused outright.
const QUERY_CREDENTIALS = ["apikey", "api_key", "access_token", "token", "key", "authorization"];

interface UserRow {
  id: string;
  tenant_id: string;
  email: string;
  name: string;
  permissions: string[];
  entitlements: TenantEntitlements;
}

export interface Authenticator {
  clock: Clock;
  apiKeys: ApiKeyVerifier;
  /** Verified bearer tokens and their people. */
  people: SignedInPeople;
  lastUsed: LastUsedRecorder;
}

export async function loadUserPrincipal(db: Queryable, userId: string): Promise<UserPrincipal | null> {
  const [row] = await db.query<UserRow>(
    `select u.id, u.tenant_id, u.email, u.name, u.permissions, t.entitlements
       from users u join tenants t on t.id = u.tenant_id
      where u.id = $1 and not u.disabled`,
    [userId],
  );
  if (!row) return null;
  return {
    kind: "user",
    tenantId: row.tenant_id,
    userId: row.id,
    email: row.email,
    name: row.name,
    entitlements: row.entitlements,
    permissions: effectivePermissions(row.permissions),
  };
}

export function refuseQueryCredentials(query: unknown): void {
  if (query === null || typeof query !== "object") return;
  for (const name of Object.keys(query)) {
    if (QUERY_CREDENTIALS.includes(name.toLowerCase())) {
      throw ApiError.unauthorized(
        `Credentials are never accepted in the query string ('${name}'); send the Authorization header`,
      );
    }
  }
}

// Schemes a message may name back to the caller. Anything else may be the credential itself
// (a bare key with no scheme is a common mistake), and a 401 never repeats a credential.
const NAMEABLE_SCHEMES = new Set([
  "apikey",
  "basic",
  "bearer",
  "digest",
  "dpop",
  "hoba",
  "mutual",
  "negotiate",
  "ntlm",
  "token",
  "vapid",
]);

/** Splits `Authorization: <scheme> <credential>`; the scheme lower-cased, the credential trimmed. */
function parseAuthorization(header: string): { scheme: string; credential: string } {
  const space = header.indexOf(" ");
  return {
    scheme: (space < 0 ? header : header.slice(0, space)).toLowerCase(),
    credential: space < 0 ? "" : header.slice(space + 1).trim(),
  };
}

/**
 * The caller of an `ApiKey` header whose key is in the verifier's cache, or of a `Bearer` header
 * whose token and person are both cached, valid right now, without a promise; undefined for
 * anything else, which `authenticate` then decides (and refuses with the same reasons as ever).
 */
export function cachedCaller(auth: Authenticator, header: string | undefined): Principal | undefined {
  if (header === undefined) return undefined;
  const { scheme, credential } = parseAuthorization(header);
  if (credential === "") return undefined;
  if (scheme === "apikey") return auth.apiKeys.cached(credential);
  return scheme === "bearer" ? auth.people.cached(credential) : undefined;
}

/**
 * A credential was given and refused (401): an unknown, revoked or expired key or token, an
 * unknown scheme. A request without any credential is not counted: nothing was tried.
 */
export function isRefusedCredential(error: unknown, header: string | undefined): boolean {
  return error instanceof ApiError && error.status === 401 && header !== undefined && header.trim() !== "";
}

/** Resolves the `Authorization` header to a caller, or throws 401 with the reason. */
export async function authenticate(auth: Authenticator, header: string | undefined): Promise<Principal> {
  if (header === undefined || header.trim() === "") {
    throw ApiError.unauthorized("Missing Authorization header; send 'ApiKey <key>' or 'Bearer <token>'");
  }
  const { scheme, credential } = parseAuthorization(header);
  const named = NAMEABLE_SCHEMES.has(scheme);
  if (credential === "") {
    throw ApiError.unauthorized(
      named
        ? `Authorization header has no credential after '${scheme}'`
        : // Most often an API key pasted alone (in the API explorer's Authorize dialog, say).
          "Authorization header has no scheme: use `Authorization: ApiKey <key>` (the word ApiKey, a space, " +
            "then the key) or `Authorization: Bearer <token>`",
    );
  }
  if (scheme === "apikey") {
    const principal = await auth.apiKeys.verify(credential);
    if (!principal) throw ApiError.unauthorized("API key is invalid, revoked or expired");
    return principal;
  }
  if (scheme === "bearer") {
    const claims = await auth.people.verify(credential);
    if (!claims) {
      // Not even a JWT's three parts: most often an API key sent with the wrong scheme.
      throw ApiError.unauthorized(
        credential.split(".").length === 3
          ? "Bearer token is invalid or expired"
          : "Bearer token is not a token from POST /api/v1/auth; an API key is sent as `Authorization: ApiKey <key>`",
      );
    }
    const principal = await auth.people.person(claims.userId);
    if (!principal || principal.tenantId !== claims.tenantId) {
      throw ApiError.unauthorized("Bearer token's user no longer exists or is disabled");
    }
    return principal;
  }
  throw ApiError.unauthorized(
    named
      ? `Unsupported Authorization scheme '${scheme}'; use ApiKey or Bearer`
      : "Unsupported Authorization scheme; use 'ApiKey <key>' or 'Bearer <token>'",
  );
}
