import { Type } from "typebox";
import { PageQuery } from "../../platform/http/envelope.js";

export const ApiTokenSchema = Type.Object({
  id: Type.String(),
  name: Type.String(),
  scopes: Type.Array(Type.String(), {
    description: "Stored and listed; they do not restrict the key (it acts as account admin), but /mcp reads them",
  }),
  legacy: Type.Boolean({ description: "Created without scopes" }),
  createdAt: Type.String({ format: "date-time" }),
  expirationDate: Type.String({ format: "date-time" }),
  lastUsedAt: Type.Union([Type.String({ format: "date-time" }), Type.Null()], {
    description: "Updated at most about once a minute",
  }),
  createdBy: Type.Union([Type.Object({ id: Type.String(), name: Type.String() }), Type.Null()]),
});

export const CreatedApiToken = Type.Object({
  ...ApiTokenSchema.properties,
  token: Type.String({
    description:
      "The raw key, base64 of 32 random bytes. Shown only in this answer; send it as 'Authorization: ApiKey <token>'",
  }),
});

export const NewApiTokenBody = Type.Object(
  {
    name: Type.String({
      minLength: 4,
      maxLength: 200,
      description: "At least 4 characters, unique on the tenant regardless of case",
    }),
    expirationDate: Type.Optional(
      Type.String({
        format: "date-time",
        description:
          "Default one calendar year after creation (same date and time next year, UTC; 29 February gives 28 February); at most that; not in the past",
      }),
    ),
    scopes: Type.Optional(
      Type.Array(Type.String({ maxLength: 100 }), {
        maxItems: 50,
        description: "Permissions you hold; none makes a legacy key",
      }),
    ),
  },
  { additionalProperties: false },
);

export const TokenListQuery = Type.Object({
  ...PageQuery.properties,
  search: Type.Optional(Type.String({ maxLength: 200, description: "Case-insensitive part of the name" })),
});
