import type { FastifyError, FastifyInstance, FastifyReply, FastifyRequest } from "fastify";
import fp from "fastify-plugin";
import { ApiError, type FieldError } from "./errors.js";

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
      return { apiError: new ApiError("validation_error", "Request body is not valid JSON"), unexpected: false };
    case "FST_ERR_CTP_BODY_TOO_LARGE":
      return {
        apiError: new ApiError("validation_error", "Request body is too large", null, 413),
        unexpected: false,
      };
    case "FST_ERR_CTP_INVALID_MEDIA_TYPE":
      return {
        apiError: new ApiError("validation_error", "Content-Type is not supported; send application/json", null, 415),
        unexpected: false,
      };
  }
  if (fastifyError.statusCode === 429) {
    return { apiError: new ApiError("rate_limited", "Too many requests; back off and retry later"), unexpected: false };
  }
  if (fastifyError.statusCode !== undefined && fastifyError.statusCode >= 400 && fastifyError.statusCode < 500) {
    return {
      apiError: new ApiError("validation_error", fastifyError.message, null, fastifyError.statusCode),
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

    app.setErrorHandler((error: FastifyError, request, reply) => {
      const { apiError, unexpected } = toApiError(error, request.id);
      if (unexpected) request.log.error({ err: error }, "unhandled error");
      else if (apiError.status >= 500) request.log.warn({ err: error }, apiError.message);
      return sendError(request, reply, apiError);
    });

    app.setNotFoundHandler((request, reply) => {
      const path = request.url.split("?")[0] ?? request.url;
      return sendError(request, reply, new ApiError("not_found", `Route ${request.method} ${path} does not exist`));
    });
  },
  { name: "http-conventions" },
);
