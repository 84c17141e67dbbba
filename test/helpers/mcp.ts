import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, expect } from "vitest";
import { generateTraffic } from "../../src/features/demo/traffic.js";
import { DAY_MS } from "../../src/platform/durations.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./app.js";

// The MCP endpoint's test fixture: the app on a real port, the SDK's own client, two tenants with
// traffic, keys of every kind, and the HTTP API the endpoint must agree with. The bindings below
// are set by mcpFixture()'s beforeAll; a test file reads them through the import (live bindings).

export const LEGACY_MESSAGE =
  "Legacy API keys (created without scopes) cannot use MCP; create a key with the reports.read scope";
export const SCOPE_MESSAGE = "This API key needs the reports.read or reports.update scope to use MCP";
export const NOT_A_KEY_MESSAGE = "The MCP endpoint takes an API key: send 'Authorization: ApiKey <key>'";
export const BAD_KEY_MESSAGE = "API key is invalid, revoked or expired";
export const MISSING_MESSAGE = "Missing Authorization header; send 'ApiKey <key>' or 'Bearer <token>'";

export const PATHS = {
  performance: "/api/v1/reports/events/performance",
  "account-metrics": "/api/v1/composites/accounts/metrics",
  "link-metrics": "/api/v1/composites/accounts/links/metrics",
};

export type Params = Record<string, string | number>;

export interface RunContent {
  report: string;
  // biome-ignore lint/suspicious/noExplicitAny: rows are whatever the report returned
  data: any;
  pagination: { offset: number; limit: number; total: number };
  meta: { timeZone: string; currency: string; unconverted: { currency: string; conversions: number }[] };
}

export let t: TestApp;
export let base: string;
/** Tenant A: plenty of traffic; its person may grant reports.update. Main key: reports.read. */
export let a: Tenancy;
/** Tenant B: less traffic of its own. Main key: reports.read. */
export let b: Tenancy;
export const keys: Record<"update" | "catalog" | "legacy" | "revoked", string> = {
  update: "",
  catalog: "",
  legacy: "",
  revoked: "",
};
export let from: string;
export let to: string;
export let mid: string;
export let midEnd: string;

export const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A key created through the API with the person's bearer; no scopes means a legacy key. */
export async function createKey(
  who: Tenancy,
  name: string,
  scopes?: string[],
): Promise<{ id: string; apiKey: string }> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/api-tokens",
    headers: { authorization: who.bearer },
    payload: scopes === undefined ? { name } : { name, scopes },
  });
  expect(res.statusCode, res.body).toBe(201);
  const { id, token } = res.json().data;
  const record = await t.call({
    method: "GET",
    url: `/api/v1/api-tokens/${id}`,
    headers: { authorization: who.bearer },
  });
  expect(record.json().data.legacy).toBe(scopes === undefined);
  return { id, apiKey: `ApiKey ${token}` };
}

export function transport(authorization?: string) {
  return new StreamableHTTPClientTransport(
    new URL(`${base}/mcp`),
    authorization === undefined ? {} : { requestInit: { headers: { authorization } } },
  );
}

/** Connects the SDK client (the initialize round trip), runs `use`, closes. */
export async function withClient<T>(authorization: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(transport(authorization));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** What the SDK client throws when connecting with this Authorization header. */
export async function refusal(authorization?: string): Promise<StreamableHTTPError> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  let caught: unknown;
  try {
    await client.connect(transport(authorization));
  } catch (error) {
    caught = error;
  } finally {
    await client.close();
  }
  expect(caught).toBeInstanceOf(StreamableHTTPError);
  return caught as StreamableHTTPError;
}

/** A raw JSON-RPC POST to /mcp, as any HTTP client would send it. */
export async function rawPost(authorization: string | undefined, method: string, params: Record<string, unknown> = {}) {
  const res = await fetch(`${base}/mcp`, {
    method: "POST",
    headers: {
      "content-type": "application/json",
      accept: "application/json, text/event-stream",
      ...(authorization === undefined ? {} : { authorization }),
    },
    body: JSON.stringify({ jsonrpc: "2.0", id: 1, method, params }),
  });
  return { status: res.status, body: (await res.json()) as Record<string, unknown> };
}

export const INITIALIZE = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw", version: "1.0.0" },
};

export function text(result: CallToolResult): string {
  const [first] = result.content;
  if (first?.type !== "text") throw new Error(`expected text content, got ${JSON.stringify(result.content)}`);
  return first.text;
}

export async function run(
  client: Client,
  report: string,
  parameters: Record<string, unknown>,
): Promise<CallToolResult> {
  return (await client.callTool({ name: "run_report", arguments: { report, parameters } })) as CallToolResult;
}

export async function runOk(client: Client, report: string, parameters: Record<string, unknown>): Promise<RunContent> {
  const result = await run(client, report, parameters);
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
  return result.structuredContent as unknown as RunContent;
}

export async function http(who: Tenancy, report: string, params: Params) {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  return t.call({
    method: "GET",
    url: `${PATHS[report as keyof typeof PATHS]}?${query}`,
    headers: { authorization: who.apiKey },
  });
}

export async function httpOk(who: Tenancy, report: string, params: Params) {
  const res = await http(who, report, params);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The clicks in a report's data, whichever shape it has. */
// biome-ignore lint/suspicious/noExplicitAny: rows are whatever the report returned
export function clicksIn(data: any): number {
  if (Array.isArray(data)) return data.reduce((n, row) => n + (row.metrics?.clicks ?? row.clicks ?? 0), 0);
  const column = data.columns.indexOf("clicks");
  return data.rows.reduce((n: number, row: number[]) => n + (row[column] ?? 0), 0);
}

export async function clickCount(tenantId: string): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: number }>("select count(*)::int as n from clicks where tenant_id = $1", [
    tenantId,
  ]);
  return row?.n ?? 0;
}

/** The app, two tenants with traffic and the keys above, made once per test file that calls it. */
export function mcpFixture(): void {
  beforeAll(async () => {
    t = await startTestApp();
    base = await t.app.listen({ host: "127.0.0.1", port: 0 });
    const now = t.clock.now();
    from = isoDay(now.getTime() - 25 * DAY_MS);
    to = isoDay(now.getTime());
    mid = isoDay(now.getTime() - 9 * DAY_MS);
    midEnd = isoDay(now.getTime() - 10 * DAY_MS);
    a = await seedTenancy(t, { permissions: ["account.admin", "reports.update"], key: { scopes: ["reports.read"] } });
    b = await seedTenancy(t, { key: { scopes: ["reports.read"] } });
    await generateTraffic(t.ctx.db, a.tenantId, { days: 20, clicks: 3000, now, seed: 11 });
    await generateTraffic(t.ctx.db, b.tenantId, { days: 20, clicks: 700, now, seed: 22 });
    keys.update = (await createKey(a, "mcp update key", ["reports.update"])).apiKey;
    keys.catalog = (await createKey(a, "mcp catalog key", ["catalog.read", "conversions.read"])).apiKey;
    keys.legacy = (await createKey(a, "mcp legacy key")).apiKey;
    const revoked = await createKey(a, "mcp revoked key", ["reports.read"]);
    // It works before it is revoked, so the refusal below is the revocation's doing.
    await withClient(revoked.apiKey, async (client) => expect((await client.listTools()).tools).toHaveLength(3));
    const deleted = await t.call({
      method: "DELETE",
      url: `/api/v1/api-tokens/${revoked.id}`,
      headers: { authorization: a.bearer },
    });
    expect(deleted.statusCode).toBe(200);
    keys.revoked = revoked.apiKey;
  }, 120_000);

  afterAll(async () => t?.close());
}
