import type { CallToolResult } from "@modelcontextprotocol/sdk/types.js";
import { describe, expect, it } from "vitest";
import {
  a,
  BAD_KEY_MESSAGE,
  b,
  base,
  clickCount,
  from,
  httpOk,
  INITIALIZE,
  keys,
  LEGACY_MESSAGE,
  MISSING_MESSAGE,
  mcpFixture,
  NOT_A_KEY_MESSAGE,
  PATHS,
  rawPost,
  refusal,
  runOk,
  SCOPE_MESSAGE,
  t,
  text,
  to,
  withClient,
} from "./helpers/mcp.js";

// Who may use the MCP endpoint (docs/reports-and-mcp.md), what one tenant's key sees of
// another, and that nothing but the read-only tools is exposed.

mcpFixture();

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
