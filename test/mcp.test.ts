import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import { StreamableHTTPClientTransport, StreamableHTTPError } from "@modelcontextprotocol/sdk/client/streamableHttp.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { DAY_MS } from "../src/platform/durations.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

// The MCP endpoint (docs/reports-and-mcp.md), driven by the SDK's own client over real
// HTTP, and checked against the HTTP API it must agree with.

const LEGACY_MESSAGE =
  "Legacy API keys (created without scopes) cannot use MCP; create a key with the reports.read scope";
const SCOPE_MESSAGE = "This API key needs the reports.read or reports.update scope to use MCP";
const NOT_A_KEY_MESSAGE = "The MCP endpoint takes an API key: send 'Authorization: ApiKey <key>'";
const BAD_KEY_MESSAGE = "API key is invalid, revoked or expired";
const MISSING_MESSAGE = "Missing Authorization header; send 'ApiKey <key>' or 'Bearer <token>'";

const PATHS = {
  performance: "/api/v1/reports/events/performance",
  "account-metrics": "/api/v1/composites/accounts/metrics",
  "link-metrics": "/api/v1/composites/accounts/links/metrics",
};

type Params = Record<string, string | number>;

interface RunContent {
  report: string;
  // biome-ignore lint/suspicious/noExplicitAny: rows are whatever the report returned
  data: any;
  pagination: { offset: number; limit: number; total: number };
}

let t: TestApp;
let base: string;
/** Tenant A: plenty of traffic; its person may grant reports.update. Main key: reports.read. */
let a: Tenancy;
/** Tenant B: less traffic of its own. Main key: reports.read. */
let b: Tenancy;
const keys: Record<"update" | "catalog" | "legacy" | "revoked", string> = {
  update: "",
  catalog: "",
  legacy: "",
  revoked: "",
};
let from: string;
let to: string;
let mid: string;
let midEnd: string;

const isoDay = (ms: number) => new Date(ms).toISOString().slice(0, 10);

/** A key created through the API with the person's bearer; no scopes means a legacy key. */
async function createKey(who: Tenancy, name: string, scopes?: string[]): Promise<{ id: string; apiKey: string }> {
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

function transport(authorization?: string) {
  return new StreamableHTTPClientTransport(
    new URL(`${base}/mcp`),
    authorization === undefined ? {} : { requestInit: { headers: { authorization } } },
  );
}

/** Connects the SDK client (the initialize round trip), runs `use`, closes. */
async function withClient<T>(authorization: string, use: (client: Client) => Promise<T>): Promise<T> {
  const client = new Client({ name: "mcp-test", version: "1.0.0" });
  await client.connect(transport(authorization));
  try {
    return await use(client);
  } finally {
    await client.close();
  }
}

/** What the SDK client throws when connecting with this Authorization header. */
async function refusal(authorization?: string): Promise<StreamableHTTPError> {
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
async function rawPost(authorization: string | undefined, method: string, params: Record<string, unknown> = {}) {
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

const INITIALIZE = {
  protocolVersion: "2025-06-18",
  capabilities: {},
  clientInfo: { name: "raw", version: "1.0.0" },
};

function text(result: CallToolResult): string {
  const [first] = result.content;
  if (first?.type !== "text") throw new Error(`expected text content, got ${JSON.stringify(result.content)}`);
  return first.text;
}

async function run(client: Client, report: string, parameters: Record<string, unknown>): Promise<CallToolResult> {
  return (await client.callTool({ name: "run_report", arguments: { report, parameters } })) as CallToolResult;
}

async function runOk(client: Client, report: string, parameters: Record<string, unknown>): Promise<RunContent> {
  const result = await run(client, report, parameters);
  expect(result.isError, JSON.stringify(result.content)).not.toBe(true);
  return result.structuredContent as unknown as RunContent;
}

async function http(who: Tenancy, report: string, params: Params) {
  const query = new URLSearchParams(Object.entries(params).map(([k, v]) => [k, String(v)]));
  return t.call({
    method: "GET",
    url: `${PATHS[report as keyof typeof PATHS]}?${query}`,
    headers: { authorization: who.apiKey },
  });
}

async function httpOk(who: Tenancy, report: string, params: Params) {
  const res = await http(who, report, params);
  expect(res.statusCode, res.body).toBe(200);
  return res.json();
}

/** The clicks in a report's data, whichever shape it has. */
// biome-ignore lint/suspicious/noExplicitAny: rows are whatever the report returned
function clicksIn(data: any): number {
  if (Array.isArray(data)) return data.reduce((n, row) => n + (row.metrics?.clicks ?? row.clicks ?? 0), 0);
  const column = data.columns.indexOf("clicks");
  return data.rows.reduce((n: number, row: number[]) => n + (row[column] ?? 0), 0);
}

async function clickCount(tenantId: string): Promise<number> {
  const [row] = await t.ctx.db.query<{ n: number }>("select count(*)::int as n from clicks where tenant_id = $1", [
    tenantId,
  ]);
  return row?.n ?? 0;
}

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

describe("who may use /mcp: a key with reports.read or reports.update", () => {
  it("admits a key with the reports.read scope", async () => {
    await withClient(a.apiKey, async (client) => {
      expect(client.getServerVersion()?.name).toBe("tracking-platform-reports");
      const rows = await runOk(client, "performance", {
        stats: "clicks",
        conversionDateFrom: from,
        conversionDateTo: to,
      });
      expect(rows.data).toEqual([{ clicks: await clickCount(a.tenantId) }]);
    });
  });

  it("admits a key with only the reports.update scope, with the same numbers", async () => {
    const params = { fields: "account", stats: "clicks,ftd", conversionDateFrom: from, conversionDateTo: to };
    const read = await withClient(a.apiKey, (client) => runOk(client, "performance", params));
    const update = await withClient(keys.update, (client) => runOk(client, "performance", params));
    expect(update).toEqual(read);
    expect(read.data.length).toBeGreaterThan(1);
  });

  it("refuses a key whose scopes hold neither reports scope (403)", async () => {
    const error = await refusal(keys.catalog);
    expect(error.code).toBe(403);
    expect(error.message).toContain(SCOPE_MESSAGE);
    const raw = await rawPost(keys.catalog, "initialize", INITIALIZE);
    expect(raw).toEqual({
      status: 403,
      body: { jsonrpc: "2.0", error: { code: -32003, message: SCOPE_MESSAGE }, id: null },
    });
  });

  it("refuses a legacy key (no scopes) with a message saying why (403)", async () => {
    const error = await refusal(keys.legacy);
    expect(error.code).toBe(403);
    expect(error.message).toContain(LEGACY_MESSAGE);
    expect(error.message.toLowerCase()).toContain("legacy");
    const raw = await rawPost(keys.legacy, "tools/list");
    expect(raw).toEqual({
      status: 403,
      body: { jsonrpc: "2.0", error: { code: -32003, message: LEGACY_MESSAGE }, id: null },
    });
    // The same key is a working account-wide key on the HTTP API: only /mcp reads scopes.
    const res = await t.call({ method: "GET", url: PATHS.performance, headers: { authorization: keys.legacy } });
    expect(res.statusCode).toBe(200);
  });

  it.each([
    ["no Authorization header", () => undefined, MISSING_MESSAGE],
    ["an invalid key", () => "ApiKey not-a-real-key-0123456789", BAD_KEY_MESSAGE],
    ["a revoked key", () => keys.revoked, BAD_KEY_MESSAGE],
  ])("refuses %s (401)", async (_name, header, message) => {
    const error = await refusal(header());
    expect(error.code).toBe(401);
    expect(error.message).toContain(message);
    const raw = await rawPost(header(), "initialize", INITIALIZE);
    expect(raw).toEqual({ status: 401, body: { jsonrpc: "2.0", error: { code: -32001, message }, id: null } });
  });

  it("refuses a Bearer JWT of a person who holds reports.read (403: a known caller, but MCP takes keys)", async () => {
    const error = await refusal(a.bearer);
    expect(error.code).toBe(403);
    expect(error.message).toContain(NOT_A_KEY_MESSAGE);
    const raw = await rawPost(a.bearer, "initialize", INITIALIZE);
    expect(raw).toEqual({
      status: 403,
      body: { jsonrpc: "2.0", error: { code: -32003, message: NOT_A_KEY_MESSAGE }, id: null },
    });
  });

  it("answers a raw JSON-RPC POST with a good key (so the refusals above are about the key)", async () => {
    const raw = await rawPost(a.apiKey, "tools/list");
    expect(raw.status).toBe(200);
    expect(raw.body.error).toBeUndefined();
    const tools = (raw.body.result as { tools: { name: string }[] }).tools.map((tool) => tool.name);
    expect(tools.sort()).toEqual(["describe_report", "list_reports", "run_report"]);
  });

  it("counts a key's calls in its usage figures, as route /mcp", async () => {
    const count = async () => {
      await t.ctx.usage.flush();
      const [row] = await t.ctx.db.query<{ n: number }>(
        "select coalesce(sum(calls), 0)::int as n from api_usage where token_id = $1 and route = '/mcp' and status = 200",
        [a.apiKeyId],
      );
      return row?.n ?? 0;
    };
    const before = await count();
    expect((await rawPost(a.apiKey, "tools/list")).status).toBe(200);
    expect((await rawPost(a.apiKey, "tools/list")).status).toBe(200);
    expect(await count()).toBe(before + 2);
  });
});

describe("tools", () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(transport(a.apiKey));
  });
  afterAll(async () => client?.close());

  it("lists exactly list_reports, describe_report and run_report, all read-only", async () => {
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name).sort()).toEqual(["describe_report", "list_reports", "run_report"]);
    for (const tool of tools) {
      expect(tool.annotations, tool.name).toMatchObject({ readOnlyHint: true, destructiveHint: false });
      expect(tool.description, tool.name).toBeTruthy();
      expect(tool.inputSchema.type).toBe("object");
    }
    expect(tools.find((tool) => tool.name === "run_report")?.inputSchema.required).toEqual(["report"]);
  });

  it("list_reports names performance, account-metrics and link-metrics", async () => {
    const result = (await client.callTool({ name: "list_reports", arguments: {} })) as CallToolResult;
    expect(result.isError).not.toBe(true);
    const reports = (result.structuredContent as { reports: { name: string; title: string }[] }).reports;
    expect(reports.map((r) => r.name)).toEqual(["performance", "account-metrics", "link-metrics"]);
    for (const report of reports) {
      expect(report.title).toBeTruthy();
      expect(text(result)).toContain(`${report.name}: ${report.title}`);
    }
  });

  it("describe_report gives parameters, fields and stats (ftd an alias of firstTimeDeposit)", async () => {
    const result = (await client.callTool({
      name: "describe_report",
      arguments: { report: "performance" },
    })) as CallToolResult;
    expect(result.isError).not.toBe(true);
    const described = result.structuredContent as {
      name: string;
      parameters: { name: string; kind: string; min?: number; max?: number; default?: unknown }[];
      fields: { name: string }[];
      stats: { name: string; aliases: string[] }[];
    };
    expect(described.name).toBe("performance");
    const names = described.parameters.map((p) => p.name);
    for (const name of ["fields", "stats", "conversionDateFrom", "conversionDateTo", "sortBy", "offset", "limit"]) {
      expect(names).toContain(name);
    }
    expect(described.parameters.find((p) => p.name === "limit")).toMatchObject({
      kind: "integer",
      min: 1,
      max: 999,
      default: 100,
    });
    expect(described.fields.map((f) => f.name)).toEqual(
      expect.arrayContaining(["date", "brand", "account", "country"]),
    );
    expect(described.stats.find((s) => s.name === "firstTimeDeposit")?.aliases).toEqual(["ftd"]);
    expect(described.stats.map((s) => s.name)).toEqual(expect.arrayContaining(["clicks", "signups", "commission"]));
    expect(text(result)).toContain("firstTimeDeposit (alias ftd)");

    const links = (await client.callTool({ name: "describe_report", arguments: { report: "link-metrics" } }))
      .structuredContent as typeof described;
    expect(links.fields).toEqual([]);
    expect(links.parameters.map((p) => p.name)).toEqual(
      expect.arrayContaining(["metricsFrom", "metricsTo", "comparisonFrom", "comparisonTo", "sortBy", "accountId"]),
    );
  });

  it("describes each report with the parameters the HTTP API documents for it", async () => {
    const doc = await t.call({ method: "GET", url: "/api/swagger/v1/swagger.json" });
    const paths = JSON.parse(doc.body).paths as Record<
      string,
      { get?: { parameters?: { name: string; in: string }[] } }
    >;
    for (const [report, path] of Object.entries(PATHS)) {
      const documented = (paths[path]?.get?.parameters ?? []).filter((p) => p.in === "query").map((p) => p.name);
      const described = (await client.callTool({ name: "describe_report", arguments: { report } }))
        .structuredContent as { parameters: { name: string }[] };
      expect(described.parameters.map((p) => p.name).sort(), report).toEqual(documented.sort());
      expect(documented.length, report).toBeGreaterThan(5);
    }
  });

  it("refuses an unknown report as a tool error naming it", async () => {
    for (const tool of ["describe_report", "run_report"]) {
      const result = (await client.callTool({
        name: tool,
        arguments: { report: "revenue-forecast" },
      })) as CallToolResult;
      expect(result.isError, tool).toBe(true);
      expect(text(result)).toBe(
        "report Unknown report 'revenue-forecast'; known: performance, account-metrics, link-metrics",
      );
    }
    const missing = (await client.callTool({ name: "describe_report", arguments: {} })) as CallToolResult;
    expect(missing.isError).toBe(true);
    expect(text(missing)).toBe("report is required");
  });

  it("run_report returns { report, data, pagination } and a text table", async () => {
    const result = await run(client, "performance", {
      fields: "date,brand",
      stats: "clicks,ftd,commission",
      conversionDateFrom: from,
      conversionDateTo: to,
      sortBy: "clicks",
      limit: 5,
    });
    expect(result.isError).not.toBe(true);
    const content = result.structuredContent as unknown as RunContent;
    expect(Object.keys(content).sort()).toEqual(["data", "pagination", "report"]);
    expect(content.report).toBe("performance");
    expect(content.data).toHaveLength(5);
    expect(content.pagination).toMatchObject({ offset: 0, limit: 5 });
    expect(content.pagination.total).toBeGreaterThan(5);
    const clicks = content.data.map((row: { clicks: number }) => row.clicks);
    expect(clicks).toEqual([...clicks].sort((x, y) => y - x));
    const table = text(result).split("\n");
    expect(table[0]).toBe("| date | brand | brandId | clicks | firstTimeDeposit | commission |");
    expect(table[1]).toBe("| --- | --- | --- | --- | --- | --- |");
    const top = content.data[0];
    expect(table[2]).toBe(
      `| ${top.date} | ${top.brand} | ${top.brandId} | ${top.clicks} | ${top.firstTimeDeposit} | ${top.commission} |`,
    );
    expect(table.at(-1)).toBe(`${content.pagination.total} rows in all; this page starts at offset 0 (limit 5).`);
  });

  it("run_report with responseType table gives columns and rows", async () => {
    const rows = await runOk(client, "performance", {
      fields: "country",
      stats: "clicks",
      conversionDateFrom: from,
      conversionDateTo: to,
      responseType: "table",
    });
    expect(rows.data.columns).toEqual(["country", "clicks"]);
    const total = rows.data.rows.reduce((sum: number, row: [string | null, number]) => sum + row[1], 0);
    expect(total).toBe(await clickCount(a.tenantId));
  });
});

describe("run_report agrees with the HTTP API", () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(transport(a.apiKey));
  });
  afterAll(async () => client?.close());

  const cases: [string, string, () => Params][] = [
    [
      "performance by date and brand, sorted and paged",
      "performance",
      () => ({
        fields: "date,brand",
        stats: "clicks,uniqueClicks,ftd,deposits,depositAmount,commission,epc",
        conversionDateFrom: from,
        conversionDateTo: to,
        sortBy: "+clicks",
        offset: 3,
        limit: 20,
      }),
    ],
    [
      "performance by conversion type and account, as a table",
      "performance",
      () => ({
        fields: "conversionType,account",
        conversionDateFrom: from,
        conversionDateTo: to,
        responseType: "table",
      }),
    ],
    ["performance totals, all stats, default window", "performance", () => ({})],
    [
      "account metrics with a comparison window, sorted by ftd",
      "account-metrics",
      () => ({
        metricsFrom: mid,
        metricsTo: to,
        comparisonFrom: from,
        comparisonTo: midEnd,
        sortBy: "ftd",
        limit: 4,
      }),
    ],
    [
      "account metrics, active only, second page",
      "account-metrics",
      () => ({ metricsFrom: from, metricsTo: to, status: "active", offset: 1, limit: 2 }),
    ],
    [
      "link metrics sorted ascending by commission",
      "link-metrics",
      () => ({ metricsFrom: from, metricsTo: to, comparisonFrom: from, comparisonTo: midEnd, sortBy: "+commission" }),
    ],
  ];

  it.each(cases)("%s", async (_name, report, params) => {
    const over = await httpOk(a, report, params());
    const rows = await runOk(client, report, params());
    expect(rows.report).toBe(report);
    expect(rows.data).toEqual(over.data);
    expect(rows.pagination).toEqual(over.pagination);
    // Real numbers, not two empty answers agreeing.
    expect(clicksIn(rows.data)).toBeGreaterThan(0);
    expect(rows.pagination.total).toBeGreaterThan(0);
  });

  it("takes numbers where the HTTP query has strings", async () => {
    const over = await httpOk(a, "link-metrics", { limit: "3", offset: "2", sortBy: "clicks" });
    const rows = await runOk(client, "link-metrics", { limit: 3, offset: 2, sortBy: "clicks" });
    expect(rows.data).toEqual(over.data);
    expect(rows.data).toHaveLength(3);
    expect(rows.data[0].metrics.clicks).toBeGreaterThan(0);
  });

  it("reports every click of the tenant, and filters to one account like the HTTP API", async () => {
    const accounts = await runOk(client, "account-metrics", { metricsFrom: from, metricsTo: to, limit: 500 });
    const sum = accounts.data.reduce((n: number, item: { metrics: { clicks: number } }) => n + item.metrics.clicks, 0);
    expect(sum).toBe(await clickCount(a.tenantId));
    const busiest = accounts.data.find((item: { metrics: { clicks: number } }) => item.metrics.clicks > 0);
    const params = { accountId: busiest.id, conversionDateFrom: from, conversionDateTo: to, stats: "clicks" };
    const one = await runOk(client, "performance", params);
    expect(one.data).toEqual([{ clicks: busiest.metrics.clicks }]);
    expect(one.data).toEqual((await httpOk(a, "performance", params)).data);
  });
});

describe("tenant isolation", () => {
  it("a key of tenant B sees B's numbers only, never A's", async () => {
    const aClicks = await clickCount(a.tenantId);
    const bClicks = await clickCount(b.tenantId);
    expect(bClicks).not.toBe(aClicks);
    const aAccounts = (await httpOk(a, "account-metrics", { limit: 500 })).data.map((item: { id: number }) => item.id);
    await withClient(b.apiKey, async (client) => {
      const totals = await runOk(client, "performance", {
        stats: "clicks",
        conversionDateFrom: from,
        conversionDateTo: to,
      });
      expect(totals.data).toEqual([{ clicks: bClicks }]);
      const accounts = await runOk(client, "account-metrics", { limit: 500 });
      const ids = accounts.data.map((item: { id: number }) => item.id);
      expect(ids.length).toBeGreaterThan(0);
      expect(ids.filter((id: number) => aAccounts.includes(id))).toEqual([]);
      expect(accounts.data).toEqual((await httpOk(b, "account-metrics", { limit: 500 })).data);
      // Filtering on one of A's accounts finds nothing of A's.
      const foreign = await runOk(client, "performance", {
        accountId: aAccounts[0],
        stats: "clicks",
        conversionDateFrom: from,
        conversionDateTo: to,
      });
      expect(foreign.data).toEqual([{ clicks: 0 }]);
      const links = await runOk(client, "link-metrics", { accountId: aAccounts[0] });
      expect(links.data).toEqual([]);
      expect(links.pagination.total).toBe(0);
    });
  });
});

describe("errors are tool errors with the HTTP API's message", () => {
  let client: Client;
  beforeAll(async () => {
    client = new Client({ name: "mcp-test", version: "1.0.0" });
    await client.connect(transport(a.apiKey));
  });
  afterAll(async () => client?.close());

  const cases: [string, string, Params, string][] = [
    ["an unknown field", "performance", { fields: "date,colour" }, "Unknown field 'colour'"],
    ["an unknown stat", "performance", { stats: "clicks,bogus" }, "Unknown stat 'bogus'"],
    ["limit 1000", "performance", { limit: 1000 }, "limit must be an integer from 1 to 999, got '1000'"],
    ["limit 0", "performance", { limit: 0 }, "limit must be an integer from 1 to 999, got '0'"],
    [
      "a malformed date",
      "performance",
      { conversionDateFrom: "01/11/2026" },
      "conversionDateFrom must be a date (YYYY-MM-DD) or an ISO 8601 date-time, got '01/11/2026'",
    ],
    [
      "a date that does not exist",
      "account-metrics",
      { metricsTo: "2026-02-30" },
      "metricsTo is not a real date: '2026-02-30'",
    ],
    [
      "comparisonFrom without comparisonTo",
      "account-metrics",
      { comparisonFrom: "2026-01-01" },
      "comparisonTo is required when comparisonFrom is given",
    ],
    [
      "comparisonFrom without comparisonTo (links)",
      "link-metrics",
      { comparisonFrom: "2026-01-01" },
      "comparisonTo is required when comparisonFrom is given",
    ],
    [
      "an unknown composite sortBy",
      "account-metrics",
      { sortBy: "revenue" },
      "sortBy Unknown sort column 'revenue'; use name or one of clicks, signups, firstTimeDeposit, qualifiers, cpaCommission, revShareCommission, flatFeeCommission, commission (alias ftd)",
    ],
    [
      "a performance sortBy that is not requested",
      "performance",
      { fields: "date", stats: "clicks", sortBy: "signups" },
      "sortBy 'signups' must be one of the requested fields or stats",
    ],
    [
      "a window ending before it starts",
      "performance",
      { conversionDateFrom: "2026-03-02", conversionDateTo: "2026-03-01" },
      "conversionDateTo must not be before conversionDateFrom",
    ],
  ];

  it.each(cases)("%s", async (_name, report, params, message) => {
    const res = await http(a, report, params);
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().message).toBe(message);
    const result = await run(client, report, params);
    expect(result.isError).toBe(true);
    expect(result.structuredContent).toBeUndefined();
    expect(text(result)).toBe(message);
  });

  it("refuses an unknown parameter by name, as the HTTP API does", async () => {
    const res = await http(a, "performance", { colour: "red" });
    expect(res.statusCode).toBe(400);
    const result = await run(client, "performance", { colour: "red" });
    expect(result.isError).toBe(true);
    expect(text(result)).toBe(res.json().message);
    expect(text(result)).toMatch(/^colour is not a parameter of this report/);
  });

  it("refuses parameters that are not an object", async () => {
    const result = (await client.callTool({
      name: "run_report",
      arguments: { report: "performance", parameters: "fields=date" },
    })) as CallToolResult;
    expect(result.isError).toBe(true);
    expect(text(result)).toBe("parameters must be an object of parameter names and values");
  });
});

describe("read-only: nothing else is exposed", () => {
  it("calling an unknown tool is an error naming the tools there are", async () => {
    await withClient(a.apiKey, async (client) => {
      for (const name of ["delete_report", "run_sql", "create_api_token"]) {
        const result = (await client.callTool({ name, arguments: {} })) as CallToolResult;
        expect(result.isError, name).toBe(true);
        expect(text(result)).toBe(`Unknown tool '${name}'; tools: list_reports, describe_report, run_report`);
      }
      // No resources or prompts either.
      expect(client.getServerCapabilities()).toEqual({ tools: {} });
      await expect(client.listResources()).rejects.toMatchObject({ code: -32601 });
      await expect(client.listPrompts()).rejects.toMatchObject({ code: -32601 });
    });
  });

  it.each(["GET", "DELETE"])("%s /mcp answers 405 (stateless, POST only)", async (method) => {
    const res = await fetch(`${base}/mcp`, {
      method,
      headers: { authorization: a.apiKey, accept: "text/event-stream" },
    });
    expect(res.status).toBe(405);
    expect(res.headers.get("allow")).toBe("POST");
    const body = (await res.json()) as { jsonrpc: string; error: { code: number; message: string } };
    expect(body.jsonrpc).toBe("2.0");
    expect(body.error.message).toBe("Method not allowed: this MCP endpoint is stateless; use POST");
  });
});
