export { ApiKeyVerifier } from "./api-key-verifier.js";
export { type Authenticator, loadUserPrincipal } from "./authenticate.js";
export { authHook, callerOf, personOf, requirePermission } from "./hook.js";
export { JwtSigner } from "./jwt.js";
export { apiKeyPermissions, effectivePermissions, isPermission, PERMISSIONS, type Permission } from "./permissions.js";
export type { ApiKeyPrincipal, Principal, TenantEntitlements, UserPrincipal } from "./principal.js";
export { authRoutes } from "./routes.js";
