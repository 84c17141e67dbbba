export { userRoutes } from "./routes.js";
export { Entitlements, ListQuery, NewUserBody, Tenant as TenantSchema, User as UserSchema } from "./schemas.js";
export {
  createTenant,
  createUser,
  DEFAULT_ENTITLEMENTS,
  findLogin,
  getTenant,
  listTenants,
  type Tenant,
  type TenantInput,
  type User,
  updateTenant,
  updateUser,
} from "./service.js";
