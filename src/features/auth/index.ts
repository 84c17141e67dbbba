export { ApiKeyVerifier } from "./api-key-verifier.js";
export { authenticate, isRefusedCredential } from "./authenticate.js";
export { callerOf } from "./caller.js";
export { JwtSigner } from "./jwt.js";
export { LastUsedRecorder } from "./last-used.js";
export { isPermission, PERMISSIONS, type Permission } from "./permissions.js";
export type { Principal, TenantEntitlements } from "./principal.js";
export { AUTH_RETENTION, broadcastRevoked, listenForRevocations } from "./revocations.js";
export { SignedInPeople } from "./signed-in-people.js";
