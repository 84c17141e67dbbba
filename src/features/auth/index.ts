export { ApiKeyVerifier } from "./api-key-verifier.js";
export { authHook, callerOf } from "./hook.js";
export { JwtSigner } from "./jwt.js";
export { isPermission, PERMISSIONS, type Permission } from "./permissions.js";
export type { Principal, TenantEntitlements } from "./principal.js";
export { authRoutes } from "./routes.js";
