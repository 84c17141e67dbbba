import type { SwaggerOptions, SwaggerTransform } from "@fastify/swagger";

const VERSION_NOTE =
  "Version is in the path (/api/v1). Every /api answer uses the envelope { code, message, data, pagination? }.";

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === "object" && value !== null && !Array.isArray(value);
}

/**
 * A query parameter with a `default` is optional to the caller: the service fills it in
 * (ajv's useDefaults). The validating schema still lists it as required, so that the handler's
 * static type has it; only the published copy leaves it out of `required`.
 */
function defaultsOptional(querystring: unknown): unknown {
  if (!isRecord(querystring) || !Array.isArray(querystring.required)) return querystring;
  const { properties } = querystring;
  if (!isRecord(properties)) return querystring;
  const required = querystring.required.filter((name) => {
    const property = typeof name === "string" ? properties[name] : undefined;
    return !(isRecord(property) && "default" in property);
  });
  return required.length === querystring.required.length ? querystring : { ...querystring, required };
}

/** Adjusts each route's schema for the document only; validation keeps the original. */
const documentTransform: SwaggerTransform = ({ schema, url }) => {
  if (!isRecord(schema) || schema.querystring === undefined) return { schema, url };
  return { schema: { ...schema, querystring: defaultsOptional(schema.querystring) }, url };
};

/** The @fastify/swagger options of one published document: the client surface or the admin surface. */
export function openApiDocument(surface: "client" | "admin", publicBaseUrl: string): SwaggerOptions {
  const client = surface === "client";
  return {
    openapi: {
      openapi: "3.1.0",
      info: {
        title: client ? "Tracking Platform API" : "Tracking Platform Admin API",
        version: "1.0.0",
        description: client
          ? `Client API of the tracking platform. Authenticate with 'Authorization: ApiKey <key>' or 'Authorization: Bearer <jwt>' from POST /api/v1/auth. ${VERSION_NOTE}`
          : `Operator surface: tenants, people, entitlements, allowances, jobs. Authenticate with 'Authorization: Bearer <ADMIN_API_KEY>'. ${VERSION_NOTE}`,
      },
      servers: [{ url: publicBaseUrl }],
      components: {
        securitySchemes: client
          ? {
              ApiKey: {
                type: "apiKey",
                in: "header",
                name: "Authorization",
                description: "The header value is 'ApiKey <key>' (scheme ApiKey, not Bearer). Never in a query string.",
              },
              BearerJwt: {
                type: "http",
                scheme: "bearer",
                bearerFormat: "JWT",
                description: "A token from POST /api/v1/auth; needed by endpoints tied to a person.",
              },
            }
          : {
              adminKey: { type: "http", scheme: "bearer", description: "The deployment's ADMIN_API_KEY" },
            },
      },
      security: client ? [{ ApiKey: [] }, { BearerJwt: [] }] : [{ adminKey: [] }],
    },
    transform: documentTransform,
  };
}
