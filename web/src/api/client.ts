import createClient, { type Middleware } from "openapi-fetch";
import { session } from "../session";
import type { paths } from "./schema";

/** A refusal from the API, with its envelope's code, message and per-field errors. */
export class ApiFailure extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    readonly fieldErrors: { path: string; message: string }[] = [],
  ) {
    super(message);
    this.name = "ApiFailure";
  }
}

const auth: Middleware = {
  onRequest({ request }) {
    const token = session.token();
    if (token) request.headers.set("Authorization", `Bearer ${token}`);
    return request;
  },
  onResponse({ request, response }) {
    // A token the API no longer accepts (expired, revoked, signed with a rotated secret): the
    // session is over, and the app returns to the sign-in page with a message.
    if (response.status === 401 && request.headers.has("Authorization")) session.end("expired");
    return response;
  },
};

/** The typed client of /api/v1: every path, parameter and answer comes from the served OpenAPI document. */
export const api = createClient<paths>({ baseUrl: window.location.origin });
api.use(auth);

interface Envelope {
  code: string;
  message: string;
  data?: unknown;
}

function isEnvelope(value: unknown): value is Envelope {
  return typeof value === "object" && value !== null && "code" in value && "message" in value;
}

/** The answer's data, or an ApiFailure carrying the envelope's message (or the HTTP status). */
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  let result: { data?: T; error?: unknown; response: Response };
  try {
    result = await call;
  } catch {
    throw new ApiFailure(0, "network_error", "The service could not be reached. Check your connection and retry.");
  }
  const { data, error, response } = result;
  if (response.ok && data !== undefined) return data;
  if (isEnvelope(error)) {
    const errors =
      typeof error.data === "object" &&
      error.data !== null &&
      "errors" in error.data &&
      Array.isArray(error.data.errors)
        ? (error.data.errors as { path: string; message: string }[])
        : [];
    throw new ApiFailure(response.status, error.code, error.message, errors);
  }
  throw new ApiFailure(response.status, "http_error", `The service answered HTTP ${response.status}.`);
}
