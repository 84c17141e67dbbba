import { expect } from "vitest";
import type { AppOptions } from "../../src/app.js";
import type { Attempt, DeliveryEvent } from "../../src/features/outgoing-webhooks/event-service.js";
import type { Webhook } from "../../src/features/outgoing-webhooks/settings-service.js";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./app.js";
import { type CatalogFixture, seedCatalog } from "./catalog.js";
import type { Receiver } from "./receiver.js";

/**
 * Outgoing conversion webhooks through the API, against a loopback receiver (receiver.ts). Each
 * test file keeps its own app and receiver and hands them in.
 */

export const WEBHOOKS_API = "/api/v1/conversions/outgoing/webhooks";

/** The receiver listens on loopback, which the sender refuses unless allowed; a hang must fail fast. */
export const WEBHOOK_ENV = { WEBHOOK_ALLOWED_HOSTS: "127.0.0.1", WEBHOOK_TIMEOUT_MS: "500" };

/** The keys of a delivery's JSON body, sorted. */
export const PAYLOAD_KEYS = [
  "account",
  "attribution",
  "brand",
  "clickDate",
  "clickId",
  "conversionId",
  "conversionType",
  "currency",
  "eventName",
  "eventTime",
  "eventValue",
  "pageViews",
  "program",
  "status",
  "trafficSource",
];

/** The placeholders only Simulate fills (docs/outgoing-webhooks.md): a live delivery renders them empty. */
export const SIMULATE_ONLY = [
  "medium",
  "campaign",
  "term",
  "content",
  "creative",
  "location",
  "locationPath",
  "documentTitle",
] as const;

/** An `Authorization` header value, or whoever holds the API key to send. */
export type Caller = string | { apiKey: string };

const headersOf = (who: Caller) => ({ authorization: typeof who === "string" ? who : who.apiKey });

/** An app whose receiver is allowed, with room for the many calls a test makes in a second. */
export function startWebhookTestApp(
  options: { env?: Record<string, string>; app?: Partial<AppOptions> } = {},
): Promise<TestApp> {
  return startTestApp({
    env: { ...WEBHOOK_ENV, ...options.env },
    app: { rateLimit: { max: 100_000 }, ...options.app },
  });
}

/**
 * Cancels the events still waiting to be sent. A tick claims due events of every tenant, so what
 * one test leaves waiting would be sent (and counted) in the next; `keep` spares tenants whose
 * events a describe's shared fixture still needs.
 */
export async function cancelWaitingEvents(
  t: TestApp,
  options: { statuses?: readonly string[]; keep?: Iterable<string> } = {},
): Promise<void> {
  await t.ctx.db.query(
    "update webhook_events set status = 'Cancelled' where status = any($1::text[]) and tenant_id <> all($2::text[])",
    [[...(options.statuses ?? ["Queued", "Retrying"])], [...(options.keep ?? [])]],
  );
}

/** Receiver paths under `prefix`, a new one for each use, so tests never see each other's requests. */
export function receiverPaths(prefix: string): (name: string) => string {
  let counter = 0;
  return (name) => `${prefix}${++counter}/${name}`;
}

/** A URL template to `path` that sends the conversion id as `c`, for conversionsAt to read back. */
export const withId = (rx: Receiver, path: string) => `${rx.base}${path}?c=\${conversionId}`;

/** The conversion ids a receiver path got, in order. */
export const conversionsAt = (rx: Receiver, path: string) => rx.at(path).map((r) => r.query.get("c"));

export interface TenantWithCatalog {
  who: Tenancy;
  cat: CatalogFixture;
}

export async function seedTenantWithCatalog(t: TestApp): Promise<TenantWithCatalog> {
  const who = await seedTenancy(t);
  return { who, cat: await seedCatalog(t, who) };
}

/** Turns the tenant's clickWebhooks entitlement on or off through the admin API. */
export async function setClickWebhooks(t: TestApp, who: Tenancy, on: boolean): Promise<void> {
  const res = await t.call({
    method: "PATCH",
    url: `/api/admin/tenants/${who.tenantId}`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { entitlements: { clickWebhooks: on } },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().data.entitlements.clickWebhooks).toBe(on);
}

let personCounter = 0;

/** Another person on the tenant, made through the admin API and signed in; returns the bearer header too. */
export async function signInPerson(
  t: TestApp,
  tenantId: string,
  person: { name: string; permissions: string[] },
): Promise<{ email: string; bearer: string }> {
  personCounter += 1;
  const email = `webhooks-person${personCounter}-${Date.now()}@example.com`;
  const password = "correct horse battery";
  const created = await t.call({
    method: "POST",
    url: `/api/admin/tenants/${tenantId}/users`,
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { email, password, ...person },
  });
  expect(created.statusCode, created.body).toBe(201);
  const login = await t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });
  expect(login.statusCode, login.body).toBe(200);
  return { email, bearer: `Bearer ${login.json().data.token}` };
}

/** Creates a webhook (a GET one named "Receiver" unless `body` says otherwise); throws unless 201. */
export async function createHook(t: TestApp, who: Caller, body: Record<string, unknown>): Promise<Webhook> {
  const res = await t.call({
    method: "POST",
    url: `${WEBHOOKS_API}/settings`,
    headers: headersOf(who),
    payload: { name: "Receiver", method: "GET", ...body },
  });
  if (res.statusCode !== 201) throw new Error(`creating a webhook answered ${res.statusCode}: ${res.body}`);
  return res.json().data;
}

export async function getHook(t: TestApp, who: Caller, id: string): Promise<Webhook> {
  const res = await t.call({ method: "GET", url: `${WEBHOOKS_API}/settings/${id}`, headers: headersOf(who) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

export async function patchHook(t: TestApp, who: Caller, id: string, body: Record<string, unknown>): Promise<Webhook> {
  const res = await t.call({
    method: "PATCH",
    url: `${WEBHOOKS_API}/settings/${id}`,
    headers: headersOf(who),
    payload: body,
  });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** Only the caller moves a webhook from Suspended back to Enabled. */
export const enableHook = (t: TestApp, who: Caller, id: string) => patchHook(t, who, id, { status: "Enabled" });

/** Suspends a webhook in its row, as the service does after failures, without waiting for them. */
export async function suspendHook(t: TestApp, id: string): Promise<void> {
  await t.ctx.db.query("update outgoing_webhooks set status = 'Suspended', status_reason = 'test' where id = $1", [id]);
}

/** `payload: null` sends no body at all. */
export function simulate(t: TestApp, who: Caller, hookId: string, payload: Record<string, unknown> | null = {}) {
  return t.call({
    method: "POST",
    url: `${WEBHOOKS_API}/settings/${hookId}/simulate`,
    headers: headersOf(who),
    ...(payload === null ? {} : { payload }),
  });
}

/** Simulates an event (see simulate), expecting 202; returns the event's id. */
export async function simulateEvent(
  t: TestApp,
  who: Caller,
  hookId: string,
  payload: Record<string, unknown> | null = {},
): Promise<string> {
  const res = await simulate(t, who, hookId, payload);
  expect(res.statusCode, res.body).toBe(202);
  return res.json().data.eventId;
}

/** What POST /conversions answers for one conversion, as far as these tests read it. */
export interface Conversion {
  id: string;
  clickId: string | null;
  trafficSourceId: number | null;
  occurredAt: string;
  attributed: boolean;
}

export async function recordConversion(
  t: TestApp,
  who: Caller,
  payload: Record<string, unknown> = { type: "Signup" },
): Promise<Conversion> {
  const res = await t.call({ method: "POST", url: "/api/v1/conversions", headers: headersOf(who), payload });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data;
}

/** Records a conversion (a Signup unless `payload` says otherwise) and returns its id. */
export async function convert(t: TestApp, who: Caller, payload?: Record<string, unknown>): Promise<string> {
  return (await recordConversion(t, who, payload)).id;
}

/** `query` is the whole query string, `?` included. */
export async function listEvents(t: TestApp, who: Caller, query = ""): Promise<DeliveryEvent[]> {
  const res = await t.call({ method: "GET", url: `${WEBHOOKS_API}/events${query}`, headers: headersOf(who) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

export const eventsOf = (t: TestApp, who: Caller, conversionId: string) =>
  listEvents(t, who, `?conversionId=${conversionId}`);

/** The one event a conversion made (for one webhook of several, if `webhookId` is given). */
export async function eventOf(
  t: TestApp,
  who: Caller,
  conversionId: string,
  webhookId?: string,
): Promise<DeliveryEvent> {
  const events = (await eventsOf(t, who, conversionId)).filter(
    (e) => webhookId === undefined || e.webhookId === webhookId,
  );
  expect(events).toHaveLength(1);
  return events[0] as DeliveryEvent;
}

export async function getEvent(t: TestApp, who: Caller, id: string): Promise<DeliveryEvent> {
  const res = await t.call({ method: "GET", url: `${WEBHOOKS_API}/events/${id}`, headers: headersOf(who) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

export async function attemptsOf(t: TestApp, who: Caller, id: string): Promise<Attempt[]> {
  const res = await t.call({ method: "GET", url: `${WEBHOOKS_API}/events/${id}/attempts`, headers: headersOf(who) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

export function resend(t: TestApp, who: Caller, id: string) {
  return t.call({ method: "POST", url: `${WEBHOOKS_API}/events/${id}/resend`, headers: headersOf(who) });
}

export interface Issue {
  id: string;
  kind: string;
  severity: string;
  status: string;
  title: string;
  subject: { type: string; id: string; name: string };
  details: Record<string, unknown>;
  closedAt: string | null;
  closedReason: string | null;
}

/** The tenant's issues of one kind, through the API. */
export async function issuesOf(t: TestApp, who: Caller, kind: string): Promise<Issue[]> {
  const res = await t.call({ method: "GET", url: `/api/v1/issues?kind=${kind}`, headers: headersOf(who) });
  expect(res.statusCode, res.body).toBe(200);
  return res.json().data;
}

/** The tenant's mails whose subject names `title`, oldest first. */
export function mailsAbout(
  t: TestApp,
  tenantId: string,
  title: string,
): Promise<{ subject: string; recipients: string[] }[]> {
  return t.ctx.db.query<{ subject: string; recipients: string[] }>(
    `select subject, recipients from mail_outbox
      where tenant_id = $1 and subject like $2 order by created_at, id`,
    [tenantId, `%${title}%`],
  );
}
