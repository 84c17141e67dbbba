import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { ApiError, type FieldError } from "./errors.js";

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
    const message =
      item.keyword === "required"
        ? "is required"
        : item.keyword === "additionalProperties"
          ? "is not an accepted property"
          : (item.message ?? "is invalid");
    errors.push({ path, message });
  }
  return errors;
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

/** Maps anything thrown into the envelope; unknown failures become a logged, generic 500. */
export function toApiError(
  error: FastifyError | Error,
  requestId: string,
): { apiError: ApiError; unexpected: boolean } {
  if (error instanceof ApiError) return { apiError: error, unexpected: false };
  const fastifyError = error as FastifyError;
  if (fastifyError.validation) {
    const errors = validationErrors(fastifyError);
    const first = errors[0];
    const message = first ? `${first.path} ${first.message}` : "Request is invalid";
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
  return {
    apiError: new ApiError("internal_error", "Internal server error", { requestId }),
    unexpected: true,
  };
}

/** Writes the envelope for anything thrown; unknown failures are logged, not echoed. */
function answerError(error: FastifyError, request: FastifyRequest, reply: FastifyReply): FastifyReply {
  const { apiError, unexpected } = toApiError(error, request.id);
  if (unexpected) request.log.error({ err: error }, "unhandled error");
  else if (apiError.status >= 500) request.log.warn({ err: error }, apiError.message);
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

/**
 * The conventions shared by every route: request id echoed in `x-request-id`, the envelope on
 * every /api error, a 404 for unknown routes in the same shape.
 */
export const httpConventions = fp(
  async (app: FastifyInstance) => {
    // Callback style: an async hook would cost a promise and a microtask on every request.
    app.addHook("onRequest", (request, reply, done) => {
      reply.header("x-request-id", request.id);
      done();
    });

    app.setErrorHandler(answerError);

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split("?")[0] ?? request.url;
      return sendError(request, reply, new ApiError("not_found", `Route ${request.method} ${path} does not exist`));
    });
  },
  { name: "http-conventions" },
);
