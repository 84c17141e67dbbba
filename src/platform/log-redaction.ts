import type { FastifyError, FastifyRequest, FastifyServerOptions } from "fastify";

/**
 * Keeps credentials out of every log line. Three places carry them: request URLs (the
 * postback key is a path segment, and callers try `?apiKey=` and the like), headers if
 * anything logs them, and free text (error messages and stacks, mail bodies, webhook URLs
 * with their query). Redaction is by shape, so a secret nobody thought of under a known
 * name is still caught; the price is an occasional harmless value shown as `[redacted]`.
 */
const REDACTED = "[redacted]";

// Query parameter names whose value is a credential: any name containing one of these.
const SECRET_NAME_PARTS = [
  "key",
  "token",
  "secret",
  "password",
  "passwd",
  "pwd",
  "auth",
  "signature",
  "credential",
  "session",
  "jwt",
];
// Short names that would match too much as parts.
const SECRET_NAMES = new Set(["sig", "pass"]);

// Header names whose value is a credential, wherever an object with such a key is logged.
const SECRET_HEADERS = new Set([
  "authorization",
  "proxy-authorization",
  "cookie",
  "set-cookie",
  "x-api-key",
  "x-health-key",
  "x-metrics-key",
]);

/** True when a query parameter (or object key) of this name holds a credential. */
export function isSecretName(rawName: string): boolean {
  let name: string;
  try {
    name = decodeURIComponent(rawName.replace(/\+/g, " "));
  } catch {
    // Undecodable: it cannot be checked, so its value is not shown.
    return true;
  }
  const flat = name.toLowerCase().replace(/[^a-z0-9]/g, "");
  return SECRET_NAMES.has(flat) || SECRET_NAME_PARTS.some((part) => flat.includes(part));
}

// The postback key is what follows /postback/ (any case, doubled slashes too) up to the query:
// a wrong key sent there may hold a `/` of its own (an API key is base64).
const POSTBACK_PATH = /(\/+postback\/+)[^?#\s"'<>]+/gi;
// `scheme://user:password@host`: the user information, also when a password written without
// percent-encoding holds a `/` (up to the `@`, once a `:` follows the scheme's slashes).
const USER_INFO = /(\b[a-z][a-z0-9+.-]*:\/\/)(?:[^/?#@\s]+|[^/?#@\s:]*:[^@\s]*)@/gi;
// `?name=value` or `&name=value` (also `;`), wherever it appears in text.
const QUERY_PARAM = /([?&;])([^=&#\s?;]+)=([^&#\s;]*)/g;
// `Bearer <x>`, `ApiKey <x>`, `Basic <x>` as written in headers, messages and stacks (a token of
// 8+ characters, so prose such as "basic checks" is left alone).
const SCHEME_CREDENTIAL = /\b(bearer|apikey|basic)(\s+)[A-Za-z0-9._~+/=%-]{8,}/gi;
// Operational webhook signing secrets, and anything shaped like a JWT.
const SIGNING_SECRET = /\bwhsec_[A-Za-z0-9+/=_-]+/g;
const JWT = /\beyJ[A-Za-z0-9_-]+\.[A-Za-z0-9_-]+\.[A-Za-z0-9_-]*/g;
// Google OAuth values (Google Ads integrations): access tokens (ya29.) and client secrets
// (GOCSPX-) of any length, refresh tokens (1// and 20+ characters, so /go/1//2 stays readable).
const GOOGLE_OAUTH = /\b(?:ya29\.|GOCSPX-)[A-Za-z0-9._~+/=-]+|(?<![A-Za-z0-9])1\/\/[A-Za-z0-9._~+/=-]{20,}/g;
// A run of base64, base64url or URL-encoded characters, `/` included: API keys are base64 of 32
// random bytes (43 characters of A-Z a-z 0-9 + / and a final `=`, or %2B %2F %3D once encoded),
// and about half of them hold a `/`; postback keys and Google's click ids look alike.
const RANDOM_RUN = /[A-Za-z0-9+/_%-]{32,}(?:=|%3D){0,2}/gi;
// A path segment that reads as a word or an id of ours (lower case, digits, `-`, `_`, an initial
// capital): trimmed off either end of a run, so `/api/v1/api-tokens/<key>` keeps its route.
const WORDISH = /^(?:[A-Z]?[a-z0-9_-]*)$/;
// The least a random part must measure: the service's own ids are lower-case and shorter.
const RANDOM_MIN = 32;
// Base64 of 32 bytes, padding included (crypto.ts randomSecret).
const API_KEY_LENGTH = 44;

function redactQuery(text: string): string {
  return text.replace(QUERY_PARAM, (whole, separator: string, name: string) =>
    isSecretName(name) ? `${separator}${name}=${REDACTED}` : whole,
  );
}

/** Where the last `count` characters of `run` start, `%XX` counting as one. */
function startOfLast(run: string, count: number): number {
  let at = run.length;
  for (let n = 0; n < count && at > 0; n++) at -= at >= 3 && /^%[0-9a-f]{2}$/i.test(run.slice(at - 3, at)) ? 3 : 1;
  return at;
}

/** Where the first `count` characters of `run` end, `%XX` counting as one. */
function endOfFirst(run: string, count: number): number {
  let at = 0;
  for (let n = 0; n < count && at < run.length; n++) at += /^%[0-9a-f]{2}$/i.test(run.slice(at, at + 3)) ? 3 : 1;
  return at;
}

/**
 * A run is cut at its `/` into segments; word-like segments at either end are kept (a route, a
 * file path), and what lies between is redacted when it is 32 characters or more in both cases
 * (random; 16 in a run as long as a key). A key's own `/` stays inside the redacted part, and
 * `%2F` is no cut at all. The redaction spans at least 43 characters from either end of the
 * random part (44 back from base64 padding: the length of an API key), so a key whose first or
 * last segment happens to read as a word is not left partly in clear; the price is a route
 * segment next to a shorter random run shown as `[redacted]`.
 */
function redactRun(run: string): string {
  const segments = run.split("/");
  let first = 0;
  let last = segments.length - 1;
  while (first <= last && WORDISH.test(segments[first] as string)) first++;
  while (last >= first && WORDISH.test(segments[last] as string)) last--;
  if (first > last) return run;
  let from = segments.slice(0, first).join("/").length + (first > 0 ? 1 : 0);
  const to = run.length - (segments.slice(last + 1).join("/").length + (last + 1 < segments.length ? 1 : 0));
  if (to === run.length && /(?:=|%3D)$/i.test(run)) from = Math.min(from, startOfLast(run, API_KEY_LENGTH));
  const core = run.slice(from, to);
  if (!/[A-Z]/.test(core) || !/[a-z]/.test(core)) return run;
  // Shorter when the run is as long as a key: a key's first segments may read as words.
  if (core.length < RANDOM_MIN && !(run.length >= API_KEY_LENGTH - 1 && core.length >= 16 && /[0-9]/.test(core))) {
    return run;
  }
  // A key sent without its padding: the segments before or after the random part may be its own.
  const start = Math.min(from, startOfLast(run.slice(0, to), API_KEY_LENGTH - 1));
  const end = Math.max(to, from + endOfFirst(run.slice(from), API_KEY_LENGTH - 1));
  return `${run.slice(0, start)}${REDACTED}${run.slice(end)}`;
}

function redactRandomRuns(text: string): string {
  return text.replace(RANDOM_RUN, redactRun);
}

/** Free text (URLs, messages, stacks, bodies) with every credential shape above redacted. */
export function redactText(text: string): string {
  return redactRandomRuns(
    redactQuery(
      text
        .replace(POSTBACK_PATH, `$1${REDACTED}`)
        .replace(USER_INFO, `$1${REDACTED}@`)
        .replace(SCHEME_CREDENTIAL, `$1$2${REDACTED}`)
        .replace(SIGNING_SECRET, `whsec_${REDACTED}`)
        .replace(JWT, REDACTED)
        .replace(GOOGLE_OAUTH, REDACTED),
    ),
  );
}

const MAX_DEPTH = 8;

function isPlain(value: object): boolean {
  const proto: unknown = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

/**
 * A copy of a logged value with credentials redacted: strings are scrubbed, credential-named
 * keys blanked, plain objects and arrays walked. Other instances (requests, replies) are left
 * to their serializers; errors are serialized here.
 */
function redactValue(value: unknown, depth = 0): unknown {
  if (typeof value === "string") return redactText(value);
  if (value === null || typeof value !== "object" || depth > MAX_DEPTH) return value;
  if (value instanceof Error) return serializeError(value, depth);
  if (Array.isArray(value)) return value.map((item) => redactValue(item, depth + 1));
  if (!isPlain(value)) return value;
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = redactEntry(key, item, depth + 1);
  return out;
}

/** One property of a logged object: blanked when its name says it holds a credential. */
function redactEntry(key: string, item: unknown, depth: number): unknown {
  const lower = key.toLowerCase();
  if (SECRET_HEADERS.has(lower)) return REDACTED;
  if (typeof item === "string" && isSecretName(key) && !NOT_SECRET_KEYS.has(lower)) return REDACTED;
  return redactValue(item, depth);
}

// Keys the service logs that contain a secret name part but hold no secret.
const NOT_SECRET_KEYS = new Set(["reqid", "apikeyid", "tokenid", "keyid", "sessionid"]);

/**
 * Pino's error shape (type, message, stack, own properties, cause), every string redacted:
 * a driver or fetch error may quote the URL or header it failed on.
 */
interface SerializedError {
  [key: string]: unknown;
  type: string;
  message: string;
  stack: string;
}

function serializeError(error: Error, depth = 0): SerializedError {
  const out: SerializedError = {
    type: error.constructor?.name ?? "Error",
    message: redactText(error.message),
    stack: redactText(error.stack ?? ""),
  };
  for (const [key, item] of Object.entries(error)) {
    if (key in out || key === "cause") continue;
    out[key] = redactEntry(key, item, depth + 1);
  }
  if (error.cause !== undefined && depth < MAX_DEPTH) {
    out.cause = error.cause instanceof Error ? serializeError(error.cause, depth + 1) : redactValue(error.cause, depth);
  }
  if (error instanceof AggregateError) {
    out.aggregateErrors = error.errors.map((item: unknown) =>
      item instanceof Error ? serializeError(item, depth + 1) : redactValue(item, depth + 1),
    );
  }
  return out;
}

/** What a request log line says about the request: Fastify's fields, the URL redacted, no headers. */
function serializeRequest(request: FastifyRequest): Record<string, unknown> {
  return {
    method: request.method,
    url: redactText(request.url),
    host: request.host,
    remoteAddress: request.ip,
    remotePort: request.socket?.remotePort,
  };
}

type LoggerOption = Exclude<FastifyServerOptions["logger"], undefined>;

/**
 * The service's logger options with redaction installed: given options (tests pass a stream)
 * keep everything but cannot switch redaction off; `false` stays silent.
 */
export function secretSafeLogger(given: LoggerOption | undefined, level: string): LoggerOption {
  if (given === false) return false;
  const base = typeof given === "object" && given !== null ? given : {};
  return {
    level,
    ...base,
    serializers: {
      ...base.serializers,
      req: serializeRequest,
      // Pino runs formatters.log before the serializers, so an Error logged with an object has
      // usually been shaped (and redacted) by redactValue already: keep that shape as it is.
      err: (error: FastifyError) =>
        error instanceof Error ? serializeError(error) : (redactValue(error as unknown) as SerializedError),
      // Pino passes the message string through serializers.msg, not through formatters.log.
      msg: (message: unknown) => (typeof message === "string" ? redactText(message) : message),
    },
    formatters: {
      ...base.formatters,
      log: (object: Record<string, unknown>) => {
        const shaped = base.formatters?.log ? base.formatters.log(object) : object;
        return redactValue(shaped) as Record<string, unknown>;
      },
    },
  };
}
