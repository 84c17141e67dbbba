import { randomBytes, randomUUID } from "node:crypto";
import { createServer, type IncomingMessage, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { expect } from "vitest";
import { ADMIN_KEY, startTestApp, type Tenancy, type TestApp, type TestAppOptions } from "./app.js";

/**
 * Google on loopback, as its documentation describes it (tests never reach the internet):
 *
 * - `POST /token`: the OAuth 2.0 refresh_token grant, a form POST; answers `{ access_token,
 *   expires_in, scope, token_type }`, or `{ error, error_description }` (400 invalid_grant for an
 *   unknown or revoked refresh token, 401 invalid_client for a wrong client).
 * - `POST /v1/events:ingest`: the Data Manager API. A bearer token it issued, at most 2,000
 *   events, every event valid, or the whole request is refused (no partial failure) with a
 *   google.rpc error: `{ error: { code, message, status, details: [BadRequest fieldViolations] } }`.
 *   On success `{ requestId }`. With `validateOnly: true` the request is checked the same way
 *   (credentials, account, actions, events) and answered `{ requestId }`, but no event is kept.
 *   An account the credentials may not reach answers 403 PERMISSION_DENIED; a conversion action
 *   the account does not have, 400 INVALID_ARGUMENT naming its destination.
 *
 * Tests script refusals of particular gclids (for a reason that will not change) and failures
 * of the next requests (5xx, 429 RESOURCE_EXHAUSTED, a reset connection).
 */

export interface GoogleClient {
  clientId: string;
  clientSecret: string;
  refreshToken: string;
}

export type FakeFailure =
  | { httpStatus: number; status: string; message: string }
  /** Destroys the socket without answering. */
  | "reset";

export interface IngestCall {
  token: string;
  body: IngestBody;
  /** What the fake answered. */
  httpStatus: number;
}

export interface IngestEvent {
  transactionId?: string;
  eventTimestamp?: string;
  eventSource?: string;
  adIdentifiers?: { gclid?: string };
  conversionValue?: number;
  currency?: string;
  destinationReferences?: string[];
}

export interface IngestBody {
  destinations?: {
    reference?: string;
    operatingAccount?: { accountType?: string; accountId?: string };
    loginAccount?: { accountType?: string; accountId?: string };
    productDestinationId?: string;
  }[];
  events?: IngestEvent[];
  consent?: Record<string, string>;
  validateOnly?: boolean;
}

export interface FakeGoogle {
  readonly base: string;
  /** The configuration that points the service at this fake. */
  readonly env: { GOOGLE_OAUTH_TOKEN_URL: string; GOOGLE_DATA_MANAGER_URL: string };
  readonly tokenRequests: URLSearchParams[];
  readonly ingestCalls: IngestCall[];
  /** Every event Google accepted, by transactionId (a repeat is deduplicated, as Google does). */
  readonly accepted: Map<string, IngestEvent>;
  /** Every access token it handed out. */
  readonly issuedTokens: ReadonlySet<string>;
  /** A Google Ads OAuth client with its refresh token, in Google's shapes. */
  newClient(): GoogleClient;
  /** Revokes a refresh token: the next exchange answers invalid_grant. */
  revoke(refreshToken: string): void;
  /** Events with this gclid are refused (INVALID_ARGUMENT naming the event) with `description`. */
  refuseGclid(gclid: string, description: string): void;
  /** Ingest requests to this operating account are refused: PERMISSION_DENIED (403), as Google does. */
  denyAccount(accountId: string): void;
  /** This conversion action (productDestinationId) does not exist in the account: INVALID_ARGUMENT. */
  unknownAction(actionId: string): void;
  /** The next ingest requests answer these failures, one each, in order. */
  failIngest(...failures: FakeFailure[]): void;
  /** The next token exchanges answer these failures, one each, in order. */
  failToken(...failures: FakeFailure[]): void;
  close(): Promise<void>;
}

const MAX_EVENTS = 2000;
const SCOPE = "https://www.googleapis.com/auth/datamanager";

function rpcError(httpStatus: number, status: string, message: string, violations: object[] = []) {
  return {
    error: {
      code: httpStatus,
      message,
      status,
      details:
        violations.length === 0
          ? []
          : [{ "@type": "type.googleapis.com/google.rpc.BadRequest", fieldViolations: violations }],
    },
  };
}

async function readBody(request: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString("utf8");
}

function send(response: ServerResponse, status: number, body: unknown): void {
  response.writeHead(status, { "content-type": "application/json; charset=UTF-8" });
  response.end(JSON.stringify(body));
}

/** The field violations Google would name for this request (empty: valid). */
function violationsOf(
  body: IngestBody,
  refused: Map<string, string>,
  unknownActions: ReadonlySet<string>,
): { field: string; description: string }[] {
  const out: { field: string; description: string }[] = [];
  const destinations = Array.isArray(body.destinations) ? body.destinations : [];
  if (destinations.length === 0)
    out.push({ field: "destinations", description: "At least one destination is required." });
  const references = new Set<string>();
  for (const [i, destination] of destinations.entries()) {
    if (
      destination.operatingAccount?.accountType !== "GOOGLE_ADS" ||
      !/^\d+$/.test(destination.operatingAccount.accountId ?? "")
    ) {
      out.push({ field: `destinations[${i}].operatingAccount`, description: "Invalid operating account." });
    }
    if (destination.loginAccount && !/^\d+$/.test(destination.loginAccount.accountId ?? "")) {
      out.push({ field: `destinations[${i}].loginAccount`, description: "Invalid login account." });
    }
    if (!/^\d+$/.test(destination.productDestinationId ?? "")) {
      out.push({ field: `destinations[${i}].productDestinationId`, description: "Invalid conversion action." });
    } else if (unknownActions.has(destination.productDestinationId ?? "")) {
      out.push({ field: `destinations[${i}].productDestinationId`, description: "Conversion action not found." });
    }
    if (destination.reference !== undefined) {
      if (references.has(destination.reference)) {
        out.push({ field: `destinations[${i}].reference`, description: "Duplicate destination reference." });
      }
      references.add(destination.reference);
    }
  }
  const events = Array.isArray(body.events) ? body.events : [];
  if (events.length === 0 || events.length > MAX_EVENTS) {
    out.push({ field: "events", description: `Between 1 and ${MAX_EVENTS} events are required.` });
    return out;
  }
  for (const [i, event] of events.entries()) {
    const gclid = event.adIdentifiers?.gclid;
    if (typeof gclid !== "string" || gclid === "") {
      out.push({ field: `events[${i}].adIdentifiers.gclid`, description: "A click identifier is required." });
    } else if (refused.has(gclid)) {
      out.push({ field: `events[${i}].adIdentifiers.gclid`, description: refused.get(gclid) ?? "" });
    }
    const at = event.eventTimestamp;
    if (typeof at !== "string" || !/^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d+)?(Z|[+-]\d{2}:\d{2})$/.test(at)) {
      out.push({ field: `events[${i}].eventTimestamp`, description: "Invalid timestamp." });
    }
    if (event.conversionValue !== undefined && !/^[A-Z]{3}$/.test(event.currency ?? "")) {
      out.push({ field: `events[${i}].currency`, description: "Invalid currency code." });
    }
    const refs = event.destinationReferences ?? [];
    if (destinations.length > 1 && refs.length === 0) {
      out.push({ field: `events[${i}].destinationReferences`, description: "Required with several destinations." });
    }
    for (const ref of refs) {
      if (!references.has(ref)) {
        out.push({ field: `events[${i}].destinationReferences`, description: `Unknown destination '${ref}'.` });
      }
    }
  }
  return out;
}

export async function startFakeGoogle(): Promise<FakeGoogle> {
  const clients = new Map<string, GoogleClient>();
  const revoked = new Set<string>();
  const tokens = new Set<string>();
  const refused = new Map<string, string>();
  const deniedAccounts = new Set<string>();
  const unknownActions = new Set<string>();
  const ingestFailures: FakeFailure[] = [];
  const tokenFailures: FakeFailure[] = [];
  const tokenRequests: URLSearchParams[] = [];
  const ingestCalls: IngestCall[] = [];
  const accepted = new Map<string, IngestEvent>();

  const fail = (response: ServerResponse, failure: FakeFailure) => {
    if (failure === "reset") {
      response.socket?.destroy();
      return;
    }
    send(response, failure.httpStatus, rpcError(failure.httpStatus, failure.status, failure.message));
  };

  const token = (form: URLSearchParams, response: ServerResponse) => {
    const failure = tokenFailures.shift();
    if (failure) return fail(response, failure);
    if (form.get("grant_type") !== "refresh_token") {
      return send(response, 400, { error: "unsupported_grant_type", error_description: "Invalid grant_type." });
    }
    const client = clients.get(form.get("client_id") ?? "");
    if (!client || client.clientSecret !== form.get("client_secret")) {
      return send(response, 401, { error: "invalid_client", error_description: "The OAuth client was not found." });
    }
    const refreshToken = form.get("refresh_token") ?? "";
    if (client.refreshToken !== refreshToken || revoked.has(refreshToken)) {
      return send(response, 400, { error: "invalid_grant", error_description: "Token has been expired or revoked." });
    }
    const accessToken = `ya29.${randomBytes(48).toString("base64url")}`;
    tokens.add(accessToken);
    send(response, 200, { access_token: accessToken, expires_in: 3599, scope: SCOPE, token_type: "Bearer" });
  };

  const ingest = (request: IncomingMessage, text: string, response: ServerResponse) => {
    const bearer = /^Bearer (.+)$/.exec(request.headers.authorization ?? "")?.[1] ?? "";
    let body: IngestBody = {};
    try {
      body = JSON.parse(text) as IngestBody;
    } catch {
      // An unparsable body is refused below like any invalid one.
    }
    const answer = (status: number, payload: unknown) => {
      ingestCalls.push({ token: bearer, body, httpStatus: status });
      send(response, status, payload);
    };
    const failure = ingestFailures.shift();
    if (failure) {
      ingestCalls.push({ token: bearer, body, httpStatus: failure === "reset" ? 0 : failure.httpStatus });
      return fail(response, failure);
    }
    if (!tokens.has(bearer)) {
      return answer(
        401,
        rpcError(
          401,
          "UNAUTHENTICATED",
          "Request had invalid authentication credentials. Expected OAuth 2 access token.",
        ),
      );
    }
    const denied = (body.destinations ?? []).find((d) => deniedAccounts.has(d.operatingAccount?.accountId ?? ""));
    if (denied) {
      return answer(403, rpcError(403, "PERMISSION_DENIED", "The caller does not have permission"));
    }
    const violations = violationsOf(body, refused, unknownActions);
    if (violations.length > 0) {
      return answer(400, rpcError(400, "INVALID_ARGUMENT", "Request contains an invalid argument.", violations));
    }
    if (body.validateOnly === true) return answer(200, { requestId: randomUUID() });
    for (const event of body.events ?? []) accepted.set(event.transactionId ?? "", event);
    answer(200, { requestId: randomUUID() });
  };

  const server = createServer((request, response) => {
    void readBody(request).then((text) => {
      const path = (request.url ?? "").split("?")[0];
      if (request.method === "POST" && path === "/token") {
        const form = new URLSearchParams(
          request.headers["content-type"]?.startsWith("application/x-www-form-urlencoded") ? text : "",
        );
        tokenRequests.push(form);
        return token(form, response);
      }
      if (request.method === "POST" && path === "/v1/events:ingest") return ingest(request, text, response);
      send(response, 404, rpcError(404, "NOT_FOUND", `No route for ${request.method} ${path}`));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;

  return {
    base,
    env: { GOOGLE_OAUTH_TOKEN_URL: `${base}/token`, GOOGLE_DATA_MANAGER_URL: base },
    tokenRequests,
    ingestCalls,
    accepted,
    issuedTokens: tokens,
    newClient() {
      const client = {
        clientId: `${randomBytes(6).toString("hex")}-test.apps.googleusercontent.com`,
        clientSecret: `GOCSPX-${randomBytes(21).toString("base64url")}`,
        refreshToken: `1//0g${randomBytes(72).toString("base64url")}`,
      };
      clients.set(client.clientId, client);
      return client;
    },
    revoke: (refreshToken) => void revoked.add(refreshToken),
    refuseGclid: (gclid, description) => void refused.set(gclid, description),
    denyAccount: (accountId) => void deniedAccounts.add(accountId),
    unknownAction: (actionId) => void unknownActions.add(actionId),
    failIngest: (...failures) => void ingestFailures.push(...failures),
    failToken: (...failures) => void tokenFailures.push(...failures),
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

// Driving the service against the fake: the same calls every Google Ads test makes.

/** An app pointed at the fake, with room for the many calls a test makes in a second. */
export function startAdsApp(google: FakeGoogle, options: TestAppOptions = {}): Promise<TestApp> {
  return startTestApp({
    ...options,
    env: { ...google.env, ...options.env },
    app: { rateLimit: { max: 100_000 }, ...options.app },
  });
}

export const adsPath = (sourceId: number | string) => `/api/v1/traffic-sources/${sourceId}/google-ads`;

/** A complete integration body for `client`: Signup and FirstTimeDeposit mapped, enabled. */
export function adsBody(client: GoogleClient, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return {
    accountId: "123-456-7890",
    credentials: { clientId: client.clientId, clientSecret: client.clientSecret, refreshToken: client.refreshToken },
    conversionActions: { Signup: "111", FirstTimeDeposit: "222" },
    enabled: true,
    ...extra,
  };
}

export function putAds(t: TestApp, who: Tenancy, sourceId: number | string, body: unknown) {
  return t.call({
    method: "PUT",
    url: adsPath(sourceId),
    headers: { authorization: who.apiKey },
    payload: body as object,
  });
}

/** Sets up the integration, expecting 200 or 201. */
export async function connectAds(t: TestApp, who: Tenancy, sourceId: number, body: Record<string, unknown>) {
  const res = await putAds(t, who, sourceId, body);
  expect([200, 201], res.body).toContain(res.statusCode);
  return res.json().data;
}

/** Runs the job google-ads-upload through the admin surface at the app's clock; its summary. */
export async function runUpload(t: TestApp): Promise<Record<string, number>> {
  const res = await t.call({
    method: "POST",
    url: "/api/admin/jobs/google-ads-upload/run",
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: {},
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data.summary;
}

/** GET under the integration's path (`/uploads?status=Sent`, ...), expecting 200. */
export async function getAds(t: TestApp, who: Tenancy, sourceId: number, rest = "") {
  const res = await t.call({
    method: "GET",
    url: `${adsPath(sourceId)}${rest}`,
    headers: { authorization: who.apiKey },
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** A gclid as Google writes them (base64url-ish, about 90 characters). */
export const newGclid = () => `Cj0KCQiA${randomBytes(60).toString("base64url")}`;
