import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { ApiError, type FieldError } from "./errors.js";
import { badNumber, findHostileInput, nestsDeeperThan } from "./hostile-input.js";
import { distinctErrors, schemaMessage } from "./schema-messages.js";

/**
 * The router's limit on one path parameter. Ids longer than any real one must still reach
 * their route, so that the caller is authenticated first (401) and an unknown id is a 404 (or
 * a 200 where a DELETE never errors); the limit only guards regex parameters, which no route
 * uses. 16 KiB is Node's default limit on the whole request head.
 */
export const MAX_PARAM_LENGTH = 16 * 1024;

/** Turns ajv's instancePath (`/items/0/name`) or a missing property into `items[0].name`. */
function fieldPath(
  context: string | undefined,
  error: { instancePath: string; params: Record<string, unknown> },
): string {
  const segments = error.instancePath.split("/").filter(Boolean);
  const missing = error.params.missingProperty ?? error.params.additionalProperty;
  if (typeof missing === "string") segments.push(missing);
  const path = segments.reduce((acc, seg) => (/^\d+$/.test(seg) ? `${acc}[${seg}]` : acc ? `${acc}.${seg}` : seg), "");
  return path || (context ?? "request");
}

function quote(value: unknown): string {
  return typeof value === "string" ? `'${value}'` : JSON.stringify(value);
}

function validationErrors(error: FastifyError): FieldError[] {
  const items = error.validation ?? [];
  const choices = new Set<string>();
  const errors: FieldError[] = [];
  for (const item of items) {
    const path = fieldPath(error.validationContext, item);
    if (item.keyword === "const" || item.keyword === "enum") {
      // A union of literals fails once per literal: say it once, naming the value (ajv is
      // verbose, so the error carries it) and the values accepted at that place.
      if (choices.has(item.instancePath)) continue;
      choices.add(item.instancePath);
      const allowed = items
        .filter((other) => other.instancePath === item.instancePath)
        .flatMap((other) =>
          other.keyword === "const"
            ? [other.params.allowedValue]
            : other.keyword === "enum"
              ? (other.params.allowedValues as unknown[])
              : [],
        );
      const value = "data" in item ? `${quote(item.data)} ` : "";
      errors.push({ path, message: `${value}is not one of ${allowed.map(quote).join(", ")}` });
      continue;
    }
    if (item.keyword === "anyOf" && choices.has(item.instancePath)) continue;
    errors.push({ path, message: schemaMessage(item) });
  }
  // ajv runs with allErrors: a union's branches and a coerced value can say the same twice.
  return distinctErrors(errors);
}

function isApiPath(url: string): boolean {
  return url === "/api" || url.startsWith("/api/") || url.startsWith("/api?");
}

function sendError(request: FastifyRequest, reply: FastifyReply, error: ApiError): FastifyReply {
  if (error.status === 429 && !reply.hasHeader("retry-after")) reply.header("retry-after", "60");
  if (!isApiPath(request.url)) {
    return reply.status(error.status).type("text/plain; charset=utf-8").send(error.message);
  }
  return reply.status(error.status).send({ code: error.code, message: error.message, data: error.data });
}

/** A validation error (with `data.errors`, as every one carries) answered with another status than 400. */
function invalidWithStatus(path: string, message: string, status: number): ApiError {
  return new ApiError("validation_error", message, { errors: [{ path, message }] }, status);
}

/**
 * SQLSTATEs of a value the database refuses: NUL in text (22021) or jsonb (22P05), text of the
 * wrong form (22P02: a 40-digit bigint, a lone surrogate in jsonb), numbers (22003) and dates
 * (22007, 22008, 22009) out of range. Every /api field is checked before it gets that far
 * (hostile-input.ts); this is the net under the routes that keep their own contract and under
 * any check missed, so a caller's odd value is a 400, never a 500. Logged at warn with the
 * database's error: a route that reaches it should check the field itself.
 */
const REFUSED_VALUE_STATES = new Set(["22021", "22P05", "22P02", "22003", "22007", "22008", "22009"]);
export const REFUSED_VALUE_MESSAGE =
  "A value in the request cannot be stored or compared (a NUL character, text that is not valid Unicode, " +
  "or a number or date out of range); check the values sent";

/** Maps anything thrown into the envelope; unknown failures become a logged, generic 500. */
export function toApiError(
  error: FastifyError | Error,
  requestId: string,
): { apiError: ApiError; unexpected: boolean; refusedByDatabase?: true } {
  if (error instanceof ApiError) return { apiError: error, unexpected: false };
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const errors = validationErrors(fastifyError);
    // Every field's error in one sentence each, so a caller fixes them all at once.
    const message = errors.length > 0 ? errors.map((e) => `${e.path} ${e.message}`).join("; ") : "Request is invalid";
    return { apiError: new ApiError("validation_error", message, { errors }), unexpected: false };
  }
  switch (fastifyError.code) {
    case "FST_ERR_CTP_INVALID_JSON_BODY":
    case "FST_ERR_CTP_EMPTY_JSON_BODY":
      return { apiError: ApiError.invalid("body", "Request body is not valid JSON"), unexpected: false };
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return { apiError: invalidWithStatus("body", "Request body is too large", 413), unexpected: false };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        apiError: invalidWithStatus("content-type", "Content-Type is not supported; send application/json", 415),
        unexpected: false,
      };
    // The router's own refusals (answered through `frameworkErrors`, before any route runs).
    case "FST_ERR_BAD_URL":
      return { apiError: ApiError.invalid("url", fastifyError.message), unexpected: false };
    case "FST_ERR_MAX_PARAM_LENGTH":
      // A path segment longer than any id there is names nothing: the 404 of an unknown id.
      return {
        apiError: new ApiError(
          "not_found",
          `A path segment is over ${MAX_PARAM_LENGTH} characters; no id is that long`,
        ),
        unexpected: false,
      };
  }
  if (fastifyError.statusCode === 429) {
    return { apiError: new ApiError("rate_limited", "Too many requests; back off and retry later"), unexpected: false };
  }
  if (fastifyError.statusCode !== undefined && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return {
      apiError: invalidWithStatus("request", fastifyError.message, fastifyError.statusCode),
      unexpected: false,
    };
  }
  if (fastifyError.statusCode === 503) {
    return { apiError: new ApiError("service_unavailable", "Service is unavailable"), unexpected: false };
  }
  const sqlState = (error as { code?: unknown }).code;
  if (typeof sqlState === "string" && REFUSED_VALUE_STATES.has(sqlState)) {
    return { apiError: ApiError.invalid("request", REFUSED_VALUE_MESSAGE), unexpected: false, refusedByDatabase: true };
  }
  return {
    apiError: new ApiError("internal_error", "Internal server error", { requestId }),
    unexpected: true,
  };
}

/**
 * Text and numbers no column can hold (hostile-input.ts), refused with a 400 naming the field for
 * every /api request: query and body strings and numbers, path numbers. Path strings are left to
 * the path-id guard (a NUL id is an id that does not exist: 404). Outside /api, the tracking
 * routes keep their own contract (a click or a page view strips a NUL rather than be lost).
 * After validation, so 401, 403 and the path 404 come first and coerced numbers (a query
 * `offset=1e309` is Infinity by then) are seen as numbers.
 */
function refuseHostileInput(request: FastifyRequest): ApiError | null {
  if (!isApiPath(request.url)) return null;
  const found = findHostileInput(request.query, "") ?? findHostileInput(request.body, "");
  if (found) return ApiError.validation(found.path, found.message);
  for (const [name, value] of Object.entries((request.params as Record<string, unknown> | undefined) ?? {})) {
    const message = typeof value === "number" ? badNumber(value) : null;
    if (message) return ApiError.validation(name, message);
  }
  return null;
}

/** Writes the envelope for anything thrown; unknown failures are logged, not echoed. */
function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { apiError, unexpected, refusedByDatabase } = toApiError(error, request.id);
  if (unexpected) request.log.error({ err: error }, "unhandled error");
  else if (apiError.status >= 500 || refusedByDatabase) request.log.warn({ err: error }, apiError.message);
  return sendError(request, reply, apiError);
}

/**
 * Fastify's `frameworkErrors` option: the router's own refusals (a bad percent-encoding, an
 * over-long path parameter) are answered before any route or hook runs, so without it they
 * would leave in Fastify's shape, without the envelope or the request id.
 */
export function frameworkErrors(error: FastifyError, request: FastifyRequest, reply: FastifyReply): void {
  reply.header("x-request-id", request.id);
  answerError(error, request, reply);
}

export interface HttpConventionsOptions {
  /** The deepest nesting of arrays and objects a request body may have (JSON_MAX_DEPTH). */
  jsonMaxDepth: number;
}

/**
 * The conventions shared by every route: request id echoed in `x-request-id`, the envelope on
 * every /api error, a 404 for unknown routes in the same shape, hostile input refused.
 */
export const httpConventions = fp(
  async (app: FastifyInstance, options: HttpConventionsOptions) => {
    const { jsonMaxDepth } = options;
    // An empty body sent as JSON is no body: many clients (openapi-fetch, axios wrappers, Postman,
    // generated SDKs, the reference page at /api/docs) set the header on every request, DELETE and
    // bodyless POSTs included. Fastify's own parser (proto and constructor poisoning refused as
    // before) answers everything else; a route that needs a body still says so in its validation.
    const parseJson = app.getDefaultJsonParser("error", "error");
    app.removeContentTypeParser("application/json");
    app.addContentTypeParser("application/json", { parseAs: "string" }, (request, body, done) => {
      // parseAs "string": always a string here; the type also allows a Buffer.
      const text = typeof body === "string" ? body : body.toString("utf8");
      if (text.length === 0) return done(null, undefined);
      parseJson(request, text, done);
    });
    // Callback style: an async hook would cost a promise and a microtask on every request.
    app.addHook("onRequest", (request, reply, done) => {
      reply.header("x-request-id", request.id);
      done();
    });

    // Every route and content type (forms, text/plain JSON too), before the schema validator
    // walks the body.
    app.addHook("preValidation", (request, _reply, done) => {
      if (request.body !== null && typeof request.body === "object" && nestsDeeperThan(request.body, jsonMaxDepth)) {
        return done(ApiError.validation("body", `nests arrays and objects more than ${jsonMaxDepth} levels deep`));
      }
      done();
    });

    app.addHook("preHandler", (request, _reply, done) => {
      const refusal = refuseHostileInput(request);
      done(refusal ?? undefined);
    });

    app.setErrorHandler(answerError);

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split("?")[0] ?? request.url;
      return sendError(request, reply, new ApiError("not_found", `Route ${request.method} ${path} does not exist`));
    });
  },
  { name: "http-conventions" },
);
