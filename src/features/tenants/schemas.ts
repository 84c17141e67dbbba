import { Type } from "typebox";
import { PageQuery } from "../../platform/http/envelope.js";
import { PathId } from "../../platform/http/path-ids.js";
import { PermissionName } from "../auth/index.js";

export const Entitlements = Type.Object({
  apiTokens: Type.Boolean({ description: "May manage API tokens (default on)" }),
  clickWebhooks: Type.Boolean({ description: "Click conversions may fire webhooks (default off)" }),
});

export const User = Type.Object({
  id: Type.String(),
  tenantId: Type.String(),
  email: Type.String(),
  name: Type.String(),
  permissions: Type.Array(Type.String()),
  disabled: Type.Boolean(),
  createdAt: Type.String({ format: "date-time" }),
});

export const UserId = PathId("user");

export const ListQuery = Type.Object({
  ...PageQuery.properties,
  search: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive part of the name" })),
});

export const Tenant = Type.Object({
  id: Type.String(),
  name: Type.String(),
  entitlements: Entitlements,
  webhookAllowance: Type.Union([Type.Integer({ minimum: 0 }), Type.Null()], {
    description: "Postbacks per calendar month (UTC); null is unlimited",
  }),
  createdAt: Type.String({ format: "date-time" }),
  updatedAt: Type.String({ format: "date-time" }),
});

export const NewUserBody = Type.Object(
  {
    email: Type.String({ format: "email", maxLength: 254 }),
    password: Type.String({ minLength: 10, maxLength: 1024 }),
    name: Type.String({ minLength: 1, maxLength: 200 }),
    permissions: Type.Array(PermissionName, { uniqueItems: true }),
  },
  { additionalProperties: false },
);
