import { redactText } from "../../platform/log-redaction.js";

/** Where Google is (GOOGLE_OAUTH_TOKEN_URL, GOOGLE_DATA_MANAGER_URL; tests point both at loopback). */
export interface GoogleEndpoints {
  oauthTokenUrl: string;
  dataManagerUrl: string;
}

// Google answers within seconds; a hung connection must not hold an integration's lease for long.
const TIMEOUT_MS = 30_000;
// An error answer naming a violation for each of 2,000 events is a few hundred KiB; anything
// past this is cut off rather than held in memory.
const MAX_ANSWER_BYTES = 1024 * 1024;
const MAX_MESSAGE_CHARS = 1000;

/** What Google answered, as kept in an upload's history (never a credential or a token). */
export interface GoogleAnswer {
  at: string;
  /** Null when no answer came (network error, timeout). */
  httpStatus: number | null;
  requestId: string | null;
  /** The google.rpc status (INVALID_ARGUMENT, RESOURCE_EXHAUSTED, ...) or the OAuth error code. */
  status: string | null;
  message: string | null;
}

/** One `BadRequest.fieldViolations` entry of a google.rpc error. */
export interface FieldViolation {
  field: string;
  description: string;
}

export interface Credentials {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

const clip = (text: string | null | undefined): string | null =>
  text === null || text === undefined ? null : redactText(text).slice(0, MAX_MESSAGE_CHARS);

/** The answer's body as text, at most MAX_ANSWER_BYTES of it. */
async function boundedText(response: Response): Promise<string> {
  if (!response.body) return "";
  const reader = response.body.getReader();
  const chunks: Uint8Array[] = [];
  let size = 0;
  for (;;) {
    const { done, value } = await reader.read();
    if (done) break;
    const room = MAX_ANSWER_BYTES - size;
    chunks.push(value.length > room ? value.subarray(0, room) : value);
    size += Math.min(value.length, room);
    if (size >= MAX_ANSWER_BYTES) {
      await reader.cancel().catch(() => undefined);
      break;
    }
  }
  return Buffer.concat(chunks).toString("utf8");
}

function parseJson(text: string): unknown {
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return null;
  }
}

const isRecord = (value: unknown): value is Record<string, unknown> =>
  typeof value === "object" && value !== null && !Array.isArray(value);
const stringOr = (value: unknown): string | null => (typeof value === "string" ? value : null);

function noAnswer(at: Date, error: unknown): GoogleAnswer {
  const message = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  const cause = error instanceof Error && error.cause instanceof Error ? ` (${error.cause.message})` : "";
  return {
    at: at.toISOString(),
    httpStatus: null,
    requestId: null,
    status: "NETWORK_ERROR",
    message: clip(message + cause),
  };
}

export type TokenResult =
  | { ok: true; accessToken: string /** Seconds the token lives, as Google says. */; expiresIn: number }
  | { ok: false; answer: GoogleAnswer };

/**
 * Exchanges the refresh token for an access token (OAuth 2.0 refresh_token grant, a form POST).
 * The token carries the scopes the refresh token was granted: https://www.googleapis.com/auth/datamanager.
 */
export async function fetchAccessToken(
  endpoints: GoogleEndpoints,
  credentials: Credentials,
  now: () => Date,
): Promise<TokenResult> {
  const form = new URLSearchParams({
    grant_type: "refresh_token",
    client_id: credentials.clientId,
    client_secret: credentials.clientSecret,
    refresh_token: credentials.refreshToken,
  });
  let response: Response;
  let text: string;
  try {
    response = await fetch(endpoints.oauthTokenUrl, {
      method: "POST",
      headers: { "content-type": "application/x-www-form-urlencoded", accept: "application/json" },
      body: form.toString(),
      redirect: "error",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    text = await boundedText(response);
  } catch (error) {
    return { ok: false, answer: noAnswer(now(), error) };
  }
  const body = parseJson(text);
  const token = isRecord(body) ? stringOr(body.access_token) : null;
  if (response.ok && token) {
    const expiresIn = isRecord(body) && typeof body.expires_in === "number" ? body.expires_in : 0;
    return { ok: true, accessToken: token, expiresIn };
  }
  // OAuth errors: { error: "invalid_grant", error_description: "..." }.
  const status = isRecord(body) ? stringOr(body.error) : null;
  const description = isRecord(body) ? stringOr(body.error_description) : null;
  return {
    ok: false,
    answer: {
      at: now().toISOString(),
      httpStatus: response.status,
      requestId: null,
      status: status ?? "TOKEN_REFRESH_FAILED",
      message: clip(`Token refresh failed: ${description ?? status ?? `HTTP ${response.status}`}`),
    },
  };
}

export interface IngestResult {
  ok: boolean;
  answer: GoogleAnswer;
  /** The events a 400 INVALID_ARGUMENT named (BadRequest.fieldViolations), if any. */
  violations: FieldViolation[];
}

/** The BadRequest field violations of a google.rpc error body. */
function violationsOf(error: Record<string, unknown>): FieldViolation[] {
  const details = Array.isArray(error.details) ? error.details : [];
  return details.flatMap((detail: unknown) => {
    if (!isRecord(detail) || !Array.isArray(detail.fieldViolations)) return [];
    return detail.fieldViolations.flatMap((item: unknown) => {
      if (!isRecord(item)) return [];
      const field = stringOr(item.field);
      return field === null ? [] : [{ field, description: stringOr(item.description) ?? "refused by Google" }];
    });
  });
}

/** POST {base}/v1/events:ingest with a bearer access token; Google's answer, parsed. */
export async function ingestEvents(
  endpoints: GoogleEndpoints,
  accessToken: string,
  request: unknown,
  now: () => Date,
): Promise<IngestResult> {
  let response: Response;
  let text: string;
  try {
    response = await fetch(`${endpoints.dataManagerUrl}/v1/events:ingest`, {
      method: "POST",
      headers: {
        authorization: `Bearer ${accessToken}`,
        "content-type": "application/json",
        accept: "application/json",
      },
      body: JSON.stringify(request),
      redirect: "error",
      signal: AbortSignal.timeout(TIMEOUT_MS),
    });
    text = await boundedText(response);
  } catch (error) {
    return { ok: false, answer: noAnswer(now(), error), violations: [] };
  }
  const at = now().toISOString();
  const body = parseJson(text);
  if (response.ok) {
    const requestId = isRecord(body) ? stringOr(body.requestId) : null;
    return {
      ok: true,
      answer: { at, httpStatus: response.status, requestId, status: "OK", message: null },
      violations: [],
    };
  }
  const error = isRecord(body) && isRecord(body.error) ? body.error : null;
  return {
    ok: false,
    answer: {
      at,
      httpStatus: response.status,
      requestId: null,
      status: error ? stringOr(error.status) : null,
      message: clip(error ? stringOr(error.message) : text.slice(0, MAX_MESSAGE_CHARS) || `HTTP ${response.status}`),
    },
    violations: error ? violationsOf(error) : [],
  };
}
