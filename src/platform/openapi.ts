import type { SwaggerOptions, SwaggerTransform, SwaggerTransformObject } from "@fastify/swagger";

const VERSION_NOTE =
  "Version is in the path (/api/v1). Every /api answer uses the envelope { code, message, data, pagination? }.";

// The documents' descriptions are Markdown, rendered as HTML by both pages: a placeholder in
// angle brackets ('ApiKey <key>') is taken for an HTML tag and vanishes, so placeholders are
// written in capitals inside code spans.
const CLIENT_AUTH_NOTE =
  "Authenticate with an API key, header `Authorization: ApiKey YOUR_KEY`, or with a token from " +
  "POST /api/v1/auth, header `Authorization: Bearer YOUR_TOKEN`. In the explorer's Authorize dialog, " +
  "paste `ApiKey YOUR_KEY` (the word ApiKey, a space, the key) as the ApiKey value.";
const ADMIN_DESCRIPTION =
  "Operator surface: tenants, people, entitlements, allowances, jobs. Authenticate with the header " +
  `\`Authorization: Bearer ADMIN_API_KEY\` (the deployment's key). ${VERSION_NOTE}`;

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

/**
 * What an operation declares it needs, as `x-permission` in the document: "public" (no
 * credential), "authenticated" (any caller of the tenant, declared with `anyCaller`), or the
 * permission(s) the auth hook checks. Absent when the route declares nothing: the route guard
 * (test/route-guard.test.ts) fails on it, so every new route says who may call it.
 */
function declaredPermission(config: unknown): string | readonly string[] | undefined {
  if (!isRecord(config)) return undefined;
  if (config.public === true) return "public";
  const { permission } = config;
  if (typeof permission === "string" || Array.isArray(permission)) return permission as string | readonly string[];
  return config.anyCaller === true ? "authenticated" : undefined;
}

/** Adjusts each route's schema for the document only; validation keeps the original. */
const documentTransform: SwaggerTransform = ({ schema, url, route }) => {
  if (!isRecord(schema)) return { schema, url };
  const permission = declaredPermission(route?.config);
  const declared = permission === undefined ? schema : { ...schema, "x-permission": permission };
  if (schema.querystring === undefined) return { schema: declared, url };
  return { schema: { ...declared, querystring: defaultsOptional(schema.querystring) }, url };
};

/** `<` opening what Markdown would take for an HTML tag: a letter, `/`, `!` or `?` after it. */
const TAG_START = /<(?=[A-Za-z/!?])/g;

/**
 * Escapes, outside code spans, every `<` that would open an HTML tag in a Markdown description,
 * so that a placeholder such as `Bearer <token>` in any route's schema shows as written on both
 * pages instead of vanishing (or, worse, being read as markup).
 */
export function escapeMarkdownTags(text: string): string {
  return text
    .split(/(`[^`]*`)/)
    .map((part, i) => (i % 2 === 1 ? part : part.replace(TAG_START, "&lt;")))
    .join("");
}

/** A copy of the document with every `description` string escaped (escapeMarkdownTags). */
function escapeDescriptions(node: unknown): unknown {
  if (Array.isArray(node)) return node.map(escapeDescriptions);
  if (!isRecord(node)) return node;
  const copy: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(node)) {
    copy[key] =
      key === "description" && typeof value === "string" ? escapeMarkdownTags(value) : escapeDescriptions(value);
  }
  return copy;
}

const documentTransformObject: SwaggerTransformObject = (document) =>
  escapeDescriptions(
    "openapiObject" in document ? document.openapiObject : document.swaggerObject,
  ) as ReturnType<SwaggerTransformObject>;

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
          ? `Client API of the tracking platform. ${CLIENT_AUTH_NOTE} ${VERSION_NOTE}`
          : ADMIN_DESCRIPTION,
      },
      servers: [{ url: publicBaseUrl }],
      components: {
        securitySchemes: client
          ? {
              ApiKey: {
                type: "apiKey",
                in: "header",
                name: "Authorization",
                description:
                  "Paste the whole header value: the word `ApiKey`, a space, then the key, as in " +
                  "`ApiKey YOUR_KEY`. A key pasted alone is refused (401). Never in a query string.",
              },
              BearerJwt: {
                type: "http",
                scheme: "bearer",
                bearerFormat: "JWT",
                description:
                  "Paste only the `token` from the answer of POST /api/v1/auth (the explorer adds `Bearer`); " +
                  "needed by endpoints tied to a person. An API key goes in ApiKey, not here.",
              },
            }
          : {
              adminKey: {
                type: "http",
                scheme: "bearer",
                description: "Paste the deployment's ADMIN_API_KEY alone (the explorer adds `Bearer`).",
              },
            },
      },
      security: client ? [{ ApiKey: [] }, { BearerJwt: [] }] : [{ adminKey: [] }],
    },
    transform: documentTransform,
    transformObject: documentTransformObject,
  };
}
