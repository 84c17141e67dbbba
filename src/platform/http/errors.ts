/** The closed list of error codes the envelope can carry (docs/api-conventions.md). */
export type ErrorCode =
  | "validation_error"
  | "unauthorized"
  | "forbidden"
  | "not_found"
  | "conflict"
  | "rate_limited"
  | "service_unavailable"
  | "internal_error";

const STATUS: Record<ErrorCode, number> = {
  validation_error: 400,
  unauthorized: 401,
  forbidden: 403,
  not_found: 404,
  conflict: 409,
  rate_limited: 429,
  service_unavailable: 503,
  internal_error: 500,
};

const MAX_SHOWN_ID = 100;

export interface FieldError {
  path: string;
  message: string;
}

export class ApiError extends Error {
  readonly status: number;

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data: Record<string, unknown> | null = null,
    status?: number,
  ) {
    super(message);
    this.name = "ApiError";
    this.status = status ?? STATUS[code];
  }

  static validation(path: string, message: string): ApiError {
    return new ApiError("validation_error", `${path} ${message}`, { errors: [{ path, message }] });
  }

  /** A validation error whose message already names what is wrong (`Unknown field 'foo'`). */
  static invalid(path: string, message: string): ApiError {
    return new ApiError("validation_error", message, { errors: [{ path, message }] });
  }

  static notFound(what: string, id: string | number): ApiError {
    // A path id can be kilobytes long (MAX_PARAM_LENGTH); the message names it, not echoes it.
    const shown = String(id);
    const name = shown.length > MAX_SHOWN_ID ? `${shown.slice(0, MAX_SHOWN_ID)}...` : shown;
    return new ApiError("not_found", `${what} '${name}' was not found`);
  }

  static forbidden(message: string): ApiError {
    return new ApiError("forbidden", message);
  }

  static unauthorized(message: string): ApiError {
    return new ApiError("unauthorized", message);
  }

  static conflict(message: string): ApiError {
    return new ApiError("conflict", message);
  }
}
