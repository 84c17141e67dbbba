import { Type } from "typebox";
import { PERMISSIONS } from "./permissions.js";

export const LoginBody = Type.Object(
  {
    email: Type.String({ format: "email", maxLength: 254 }),
    password: Type.String({ minLength: 1, maxLength: 1024 }),
  },
  { additionalProperties: false },
);

export const LoginResult = Type.Object({
  token: Type.String({ description: "Send as 'Authorization: Bearer <token>'" }),
  tokenType: Type.Literal("Bearer"),
  expiresAt: Type.String({ format: "date-time" }),
});

export const PermissionName = Type.Enum(PERMISSIONS);

export const Me = Type.Object({
  id: Type.String(),
  email: Type.String(),
  name: Type.String(),
  tenantId: Type.String(),
  permissions: Type.Array(Type.String(), { description: "Effective permissions, account.admin expanded" }),
});

export const SignedOut = Type.Object({
  signedOut: Type.Literal(true, { description: "The token is refused from now on, on every node" }),
});
