export { tenantOfPostbackKey } from "./postback-key.js";
export { NewUserBody, Tenant as TenantSchema, User as UserSchema } from "./schemas.js";
export {
  createTenant,
  createUser,
  findLogin,
  getTenant,
  listTenants,
  rehashPasswordIfOutdated,
  tenantTimeZone,
  updateTenant,
  updateUser,
} from "./service.js";
