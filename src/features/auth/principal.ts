import type { Permission } from "./permissions.js";

export interface TenantEntitlements {
  apiTokens: boolean;
  clickWebhooks: boolean;
}

interface PrincipalBase {
  tenantId: string;
  entitlements: TenantEntitlements;
  /** Shown in the audit log: the person's name, or the key's name. */
  name: string;
  permissions: ReadonlySet<Permission>;
}

export interface UserPrincipal extends PrincipalBase {
  kind: "user";
  userId: string;
  email: string;
}

export interface ApiKeyPrincipal extends PrincipalBase {
  kind: "apiKey";
  tokenId: string;
  scopes: readonly string[];
  legacy: boolean;
  expiresAt: Date;
}

export type Principal = UserPrincipal | ApiKeyPrincipal;
