import { ApiError } from "../http/errors.js";

/** How long one statement may run, unless configured (STATEMENT_TIMEOUT_MS). */
export const DEFAULT_STATEMENT_TIMEOUT_MS = 15_000;

/** PostgreSQL's SQLSTATE for a statement cancelled, by its timeout among others. */
const QUERY_CANCELED = "57014";

/**
 * The answer to a request whose statement ran into the timeout: a 503 in the envelope, never the
 * database's message. Anything else is returned as it is.
 */
export function timeoutError(error: unknown, timeoutMs: number): unknown {
  const code = (error as { code?: unknown } | null)?.code;
  const message = error instanceof Error ? error.message : "";
  if (code !== QUERY_CANCELED || !message.includes("statement timeout")) return error;
  return new ApiError(
    "service_unavailable",
    `The request needed more than ${timeoutMs} ms of database time and was stopped; narrow it (a shorter window, a filter) or retry later`,
    { timeoutMs },
  );
}
