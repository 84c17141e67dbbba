/** Every permission; also the scope strings an API key can carry (docs/auth-and-tokens.md). */
export const PERMISSIONS = [
  "account.admin",
  "reports.read",
  "reports.update",
  "catalog.read",
  "catalog.update",
  "traffic-sources.delete",
  "conversions.read",
  "conversions.update",
  "webhooks.read",
  "webhooks.update",
  "usage.read",
] as const;
export type Permission = (typeof PERMISSIONS)[number];

// account.admin implies everything except these two, which are granted on their own.
const NOT_IMPLIED_BY_ADMIN: ReadonlySet<Permission> = new Set(["traffic-sources.delete", "reports.update"]);

export function isPermission(value: string): value is Permission {
  return (PERMISSIONS as readonly string[]).includes(value);
}

/** The permissions a holder of `granted` really has, with account.admin expanded. */
export function effectivePermissions(granted: readonly string[]): ReadonlySet<Permission> {
  const result = new Set<Permission>();
  for (const value of granted) {
    if (!isPermission(value)) continue;
    result.add(value);
    if (value === "account.admin") {
      for (const implied of PERMISSIONS) if (!NOT_IMPLIED_BY_ADMIN.has(implied)) result.add(implied);
    }
  }
  return result;
}

/** An API key acts with account.admin plus its scopes (every key is account-wide; only /mcp reads scopes). */
export function apiKeyPermissions(scopes: readonly string[]): ReadonlySet<Permission> {
  return effectivePermissions(["account.admin", ...scopes]);
}
