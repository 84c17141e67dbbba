import { Client } from "@modelcontextprotocol/sdk/client/index.js";
import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  a,
  clickCount,
  clicksIn,
  from,
  http,
  httpOk,
  mcpFixture,
  mid,
  midEnd,
  PATHS,
  type Params,
  type RunContent,
  run,
  runOk,
  t,
  text,
  to,
  transport,
} from "./helpers/mcp.js";

// The MCP endpoint's tools (docs/reports-and-mcp.md), driven by the SDK's own client over real
// HTTP: what they answer, that run_report agrees with the HTTP API, and errors in the API's words.
// Who may use it, tenant isolation and what is not exposed: mcp-access.test.ts.

mcpFixture();

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

  it("run_report returns { report, data, pagination, meta } and a text table", async () => {
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
    expect(Object.keys(content).sort()).toEqual(["data", "meta", "pagination", "report"]);
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
    expect(table.at(-2)).toBe(`${content.pagination.total} rows in all; this page starts at offset 0 (limit 5).`);
    // Then what the amounts and days are in, and what had no exchange rate.
    const unconverted = content.meta.unconverted.map((u) => `${u.conversions} in ${u.currency}`).join(", ");
    expect(table.at(-1)).toBe(
      `Amounts in USD, days in UTC.${unconverted ? ` Left out of the sums for want of an exchange rate: ${unconverted}.` : ""}`,
    );
  });

  it("run_report reads days in the timeZone it is given, as the HTTP API does, and says so", async () => {
    const params = { fields: "date", stats: "clicks", conversionDateFrom: from, conversionDateTo: to };
    const zoned = { ...params, timeZone: "Asia/Kathmandu" };
    const result = await run(client, "performance", zoned);
    const content = result.structuredContent as unknown as RunContent;
    expect(content.meta.timeZone).toBe("Asia/Kathmandu");
    expect(text(result).split("\n").at(-1)).toMatch(/^Amounts in USD, days in Asia\/Kathmandu\./);
    const res = await http(a, "performance", zoned);
    expect(res.statusCode, res.body).toBe(200);
    expect(content.data).toEqual(res.json().data);
    // Its local days are not the UTC days: the fixture's clicks fall in other rows.
    const utc = await runOk(client, "performance", params);
    expect(content.data).not.toEqual(utc.data);
    const bad = await run(client, "performance", { timeZone: "Nowhere/Land" });
    expect(bad.isError).toBe(true);
    expect(text(bad)).toMatch(/^timeZone must be an IANA time zone name/);
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
      "conversionDateFrom must be a date (YYYY-MM-DD) or an ISO 8601 date-time (YYYY-MM-DDTHH:MM[:SS], with Z or an offset for an instant, without one for wall time in the time zone), got '01/11/2026'",
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
