import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, clickThrough, seedCatalog } from "./helpers/catalog.js";

// The reports' conversion status filter (docs/reports-and-mcp.md "Conversion statuses"): pending
// and approved by default, read from the rollups; any other set read from the raw conversions of
// those statuses. A conversion counts on the day it occurred whatever day its status changed.
// Through the HTTP API and MCP, on PGlite and PostgreSQL.
//
// Today is 2026-11-10 (UTC). Deposits, in USD unless said, on one click of 11-08:
//   back      100      2026-11-09T12:00Z  approved, reversed today ("chargeback")
//   kept       10      2026-11-09T15:00Z  approved
//   fresh       1      2026-11-10T08:00Z  pending
//   fraud    1000      2026-11-09T09:00Z  recorded REJECTED
//   euros   50 EUR     2026-11-08T09:00Z  recorded rejected; 1 EUR = 2 USD: 100 USD
//   yen    500 JPY     2026-11-07T10:00Z  recorded rejected; no rate for the yen
const TODAY = "2026-11-10";
const NOW = "2026-11-10T12:00:00.000Z";
const PERFORMANCE = "/api/v1/reports/events/performance";
const ACCOUNTS = "/api/v1/composites/accounts/metrics";
const LINKS = "/api/v1/composites/accounts/links/metrics";
const STATS = "deposits,depositAmount";
const WINDOW = { conversionDateFrom: "2026-11-01", conversionDateTo: TODAY };
const ALL = "pending,approved,rejected,reversed";

let t: TestApp;
let who: Tenancy;
let cat: CatalogFixture;
let mcpKey: string;
let backId: string;

interface Meta {
  timeZone: string;
  currency: string;
  status: string[];
  unconverted: { currency: string; conversions: number }[];
}

const get = (url: string, query: Record<string, string>) =>
  t.call({ method: "GET", url: `${url}?${new URLSearchParams(query)}`, headers: { authorization: who.apiKey } });

async function report(query: Record<string, string>) {
  const res = await get(PERFORMANCE, { stats: STATS, ...WINDOW, ...query });
  expect(res.statusCode, res.body).toBe(200);
  const body = JSON.parse(res.body) as { data: Record<string, unknown>[]; meta: Meta };
  return body;
}

async function composite(url: string, query: Record<string, string>) {
  const res = await get(url, { metricsFrom: WINDOW.conversionDateFrom, metricsTo: TODAY, ...query });
  expect(res.statusCode, res.body).toBe(200);
  return JSON.parse(res.body) as { data: { id: number; metrics: Record<string, number> }[]; meta: Meta };
}

/** The deposits and amount of each day of the window (fields=date). */
const byDay = async (query: Record<string, string> = {}) => (await report({ fields: "date", ...query })).data;

async function runRollupBlocks() {
  const res = await t.call({
    method: "POST",
    url: "/api/admin/jobs/rollup-blocks/run",
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { now: NOW },
  });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.json().data).toMatchObject({ job: "rollup-blocks", ran: true });
}

async function record(clickId: string, payload: Record<string, unknown>): Promise<string> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: who.apiKey },
    payload: { type: "Deposit", clickId, ...payload },
  });
  expect(res.statusCode, res.body).toBe(201);
  return res.json().data.id as string;
}

async function mcp(args: Record<string, unknown>) {
  const res = await t.call({
    method: "POST",
    url: "/mcp",
    headers: { authorization: mcpKey, accept: "application/json, text/event-stream" },
    payload: { jsonrpc: "2.0", id: 1, method: "tools/call", params: { name: "run_report", arguments: args } },
  });
  expect(res.statusCode, res.body).toBe(200);
  return (
    JSON.parse(res.body) as { result: { isError?: boolean; structuredContent?: unknown; content: { text: string }[] } }
  ).result;
}

beforeAll(async () => {
  t = await startTestApp();
  t.clock.set("2026-11-08T08:00:00.000Z");
  who = await seedTenancy(t);
  cat = await seedCatalog(t, who);
  // MCP takes keys with scopes (the tenant's main key has none); made while the person's token is fresh.
  const key = await t.call({
    method: "POST",
    url: "/api/v1/api-tokens",
    headers: { authorization: who.bearer },
    payload: { name: "MCP status", scopes: ["reports.read"] },
  });
  expect(key.statusCode, key.body).toBe(201);
  mcpKey = `ApiKey ${key.json().data.token}`;
  const clickId = await clickThrough(t, cat);
  await t.ctx.tracking.clicks.flush();
  t.clock.set(NOW);
  const rates = await t.call({
    method: "PUT",
    url: "/api/v1/exchange-rates",
    headers: { authorization: who.apiKey },
    payload: { date: "2026-11-02", rates: { USD: 2 } },
  });
  expect(rates.statusCode, rates.body).toBe(200);
  backId = await record(clickId, { value: "100", occurredAt: "2026-11-09T12:00:00Z", externalId: "back" });
  await record(clickId, { value: "10", occurredAt: "2026-11-09T15:00:00Z" });
  await record(clickId, { value: "1", occurredAt: "2026-11-10T08:00:00Z", status: "pending" });
  await record(clickId, { value: "1000", occurredAt: "2026-11-09T09:00:00Z", status: "REJECTED" });
  await record(clickId, { value: "50", currency: "EUR", occurredAt: "2026-11-08T09:00:00Z", status: "rejected" });
  await record(clickId, { value: "500", currency: "JPY", occurredAt: "2026-11-07T10:00:00Z", status: "Rejected" });
}, 120_000);
afterAll(async () => t?.close());

describe("the status filter of the performance report", () => {
  it("counts pending and approved by default, a conversion recorded rejected left out", async () => {
    const body = await report({ fields: "date" });
    expect(body.meta.status).toEqual(["pending", "approved"]);
    // The click's day has a row, as every day with traffic.
    expect(body.data).toEqual([
      { date: "2026-11-08", deposits: 0, depositAmount: 0 },
      { date: "2026-11-09", deposits: 2, depositAmount: 110 },
      { date: "2026-11-10", deposits: 1, depositAmount: 1 },
    ]);
    // The same set in another order and case reads the rollups as the default does.
    const same = await report({ fields: "date", status: "Approved, PENDING" });
    expect(same).toEqual(body);
  });

  it("reads the rollups' blocks after the job rollup-blocks, then a reversal leaves the day the deposit occurred", async () => {
    await runRollupBlocks();
    const byAccount = async () => (await report({ fields: "account" })).data;
    expect(await byAccount()).toEqual([
      { account: "Account", accountId: cat.accountId, deposits: 3, depositAmount: 111 },
    ]);

    const res = await t.call({
      method: "PATCH",
      url: `/api/v1/conversions/${backId}`,
      headers: { authorization: who.apiKey },
      payload: { status: "reversed", reason: "chargeback" },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.status).toBe("reversed");

    // Yesterday's row goes down, today's is as it was; the blocks holding yesterday are stale
    // until the job runs again, and read as days meanwhile.
    const after = [
      { date: "2026-11-08", deposits: 0, depositAmount: 0 },
      { date: "2026-11-09", deposits: 1, depositAmount: 10 },
      { date: "2026-11-10", deposits: 1, depositAmount: 1 },
    ];
    expect(await byDay()).toEqual(after);
    const total = [{ account: "Account", accountId: cat.accountId, deposits: 2, depositAmount: 11 }];
    expect(await byAccount()).toEqual(total);
    await runRollupBlocks();
    expect(await byDay()).toEqual(after);
    expect(await byAccount()).toEqual(total);
    // Yesterday alone, as a window; and read from the raw conversions (the edges of a window of
    // instants, local days), where the reversed and rejected ones are left out too.
    const yesterday = await report({ conversionDateFrom: "2026-11-09", conversionDateTo: "2026-11-09" });
    expect(yesterday.data).toEqual([{ deposits: 1, depositAmount: 10 }]);
    const edges = await report({
      conversionDateFrom: "2026-11-09T08:00:00Z",
      conversionDateTo: "2026-11-10T09:00:00Z",
    });
    expect(edges.data).toEqual([{ deposits: 2, depositAmount: 11 }]);
    const local = await report({ fields: "date", timeZone: "America/New_York" });
    expect(local.data).toEqual([
      { date: "2026-11-08", deposits: 0, depositAmount: 0 },
      { date: "2026-11-09", deposits: 1, depositAmount: 10 },
      { date: "2026-11-10", deposits: 1, depositAmount: 1 },
    ]);
  });

  it("status=reversed shows the reversed deposit on the day it occurred", async () => {
    const body = await report({ fields: "date", status: "reversed" });
    expect(body.meta.status).toEqual(["reversed"]);
    // Days with traffic but no reversed conversion are rows of zeros, as days with clicks alone are.
    expect(body.data).toEqual([
      { date: "2026-11-08", deposits: 0, depositAmount: 0 },
      { date: "2026-11-09", deposits: 1, depositAmount: 100 },
      { date: "2026-11-10", deposits: 0, depositAmount: 0 },
    ]);
    // An exact window around it, and one just after it.
    const around = { conversionDateFrom: "2026-11-09T11:00:00Z", conversionDateTo: "2026-11-09T13:00:00Z" };
    expect((await report({ ...around, status: "REVERSED" })).data).toEqual([{ deposits: 1, depositAmount: 100 }]);
    expect((await report(around)).data).toEqual([{ deposits: 0, depositAmount: 0 }]);
    const after = { conversionDateFrom: "2026-11-09T12:00:00.001Z", conversionDateTo: TODAY };
    expect((await report({ ...after, status: "reversed" })).data).toEqual([{ deposits: 0, depositAmount: 0 }]);
  });

  it("status=rejected converts the amounts of the raw conversions and names what had no rate", async () => {
    const body = await report({ status: "rejected" });
    expect(body.meta.status).toEqual(["rejected"]);
    expect(body.meta.unconverted).toEqual([{ currency: "JPY", conversions: 1 }]);
    // 1000 USD and 50 EUR at 2 USD; the yen left out of the sum, its deposit counted.
    expect(body.data).toEqual([{ deposits: 3, depositAmount: 1100 }]);
    const days = await byDay({ status: "rejected" });
    expect(days).toEqual([
      { date: "2026-11-07", deposits: 1, depositAmount: 0 },
      { date: "2026-11-08", deposits: 1, depositAmount: 100 },
      { date: "2026-11-09", deposits: 1, depositAmount: 1000 },
      { date: "2026-11-10", deposits: 0, depositAmount: 0 },
    ]);
    // In euros: the dollars at 1/2.
    const euros = await report({ status: "rejected", currency: "EUR" });
    expect(euros.meta).toMatchObject({ currency: "EUR", unconverted: [{ currency: "JPY", conversions: 1 }] });
    expect(euros.data).toEqual([{ deposits: 3, depositAmount: 550 }]);
  });

  it("every status counts every conversion, and pending alone the pending one", async () => {
    const all = await report({ status: ALL });
    expect(all.meta.status).toEqual(["pending", "approved", "rejected", "reversed"]);
    expect(all.data).toEqual([{ deposits: 6, depositAmount: 100 + 10 + 1 + 1000 + 100 }]);
    expect((await report({ status: "pending" })).data).toEqual([{ deposits: 1, depositAmount: 1 }]);
    expect((await report({ status: "approved" })).data).toEqual([{ deposits: 1, depositAmount: 10 }]);
  });

  it("leaves the clicks as they are, whatever the statuses", async () => {
    for (const status of [undefined, "reversed", ALL]) {
      const query: Record<string, string> = { stats: "clicks,deposits", fields: "date" };
      if (status !== undefined) query.status = status;
      const rows = (await report(query)).data;
      expect(rows.find((r) => r.date === "2026-11-08")?.clicks).toBe(1);
      expect(rows.reduce((n, r) => n + Number(r.clicks), 0)).toBe(1);
    }
  });

  it("breaks down by account, conversion type and local hours from the raw conversions too", async () => {
    const accounts = await report({ fields: "account", status: "rejected,reversed" });
    expect(accounts.data).toEqual([{ account: "Account", accountId: cat.accountId, deposits: 4, depositAmount: 1200 }]);
    const types = await report({ fields: "conversionType", stats: "clicks,deposits", status: "reversed" });
    expect(types.data).toEqual([
      { conversionType: null, clicks: 1, deposits: 0 },
      { conversionType: "Deposit", clicks: 0, deposits: 1 },
    ]);
    const hours = await report({ fields: "hour", status: "reversed", timeZone: "America/New_York" });
    expect(hours.meta).toMatchObject({ timeZone: "America/New_York", status: ["reversed"] });
    expect(hours.data).toEqual([
      { hour: "2026-11-08T03:00-05:00", deposits: 0, depositAmount: 0 },
      { hour: "2026-11-09T07:00-05:00", deposits: 1, depositAmount: 100 },
    ]);
  });

  it("refuses a status it does not know, naming status", async () => {
    for (const status of ["paid", "approved,chargeback", "Reversed;rejected"]) {
      const res = await get(PERFORMANCE, { stats: STATS, status });
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().data.errors[0].path).toBe("status");
      expect(res.json().message).toContain("status");
    }
  });

  it("refuses another set than the default over a window older than the raw events, naming status", async () => {
    const old = { conversionDateFrom: "2026-06-01", conversionDateTo: "2026-06-30" };
    const res = await get(PERFORMANCE, { stats: STATS, ...old, status: "reversed" });
    expect(res.statusCode, res.body).toBe(400);
    expect(res.json().data.errors[0].path).toBe("status");
    expect(res.json().message).toContain("120 days");
    // The default set reads the rollups, kept: the same window is answered.
    expect((await report(old)).data).toEqual([{ deposits: 0, depositAmount: 0 }]);
    expect((await report({ ...old, status: "approved,pending" })).meta.status).toEqual(["pending", "approved"]);
  });
});

describe("the status filter of the composites", () => {
  it("counts the conversion statuses of status in both windows, and its active/inactive still filter accounts", async () => {
    const plain = await composite(ACCOUNTS, {});
    expect(plain.meta.status).toEqual(["pending", "approved"]);
    expect(plain.data.map((a) => [a.id, a.metrics.deposits])).toEqual([[cat.accountId, 2]]);
    const reversed = await composite(ACCOUNTS, {
      status: "Reversed,active",
      comparisonFrom: "2026-11-07",
      comparisonTo: "2026-11-08",
    });
    expect(reversed.meta.status).toEqual(["reversed"]);
    const [account] = reversed.data;
    expect(account?.metrics).toMatchObject({ deposits: 1, clicks: 1 });
    expect(account?.metrics.commission).toBe(0);
    expect((account as unknown as { comparisonMetrics: Record<string, number> }).comparisonMetrics).toMatchObject({
      deposits: 0,
      clicks: 1,
    });
    const rejected = await composite(LINKS, { status: "rejected", sortBy: "clicks" });
    expect(rejected.meta).toMatchObject({ status: ["rejected"], unconverted: [{ currency: "JPY", conversions: 1 }] });
    expect(rejected.data.map((l) => [l.id, l.metrics.deposits])).toEqual([[cat.linkId, 3]]);
    // The account status filter is as it was.
    expect((await composite(ACCOUNTS, { status: `inactive,${ALL}` })).data).toEqual([]);
  });

  it("refuses a bad status, both account statuses, or an old window, naming status", async () => {
    const bad = await get(ACCOUNTS, { status: "chargeback" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().data.errors[0].path).toBe("status");
    const both = await get(ACCOUNTS, { status: "active,inactive" });
    expect(both.statusCode).toBe(400);
    expect(both.json().data.errors[0].path).toBe("status");
    const old = await get(LINKS, {
      status: "rejected",
      comparisonFrom: "2026-05-01",
      comparisonTo: "2026-05-31",
    });
    expect(old.statusCode, old.body).toBe(400);
    expect(old.json().data.errors[0].path).toBe("status");
  });
});

describe("MCP's run_report", () => {
  it("takes status as the HTTP API does, answers meta.status and says which statuses it counted", async () => {
    const parameters = { fields: "date", stats: STATS, ...WINDOW, status: ["reversed"] };
    const result = await mcp({ report: "performance", parameters });
    expect(result.isError).not.toBe(true);
    const content = result.structuredContent as { data: unknown; meta: Meta };
    expect(content.meta.status).toEqual(["reversed"]);
    expect(content.data).toEqual(await byDay({ status: "reversed" }));
    expect(result.content[0]?.text.split("\n").at(-1)).toBe(
      "Amounts in USD, days in UTC. Conversions counted: reversed only.",
    );
    // The default says nothing of statuses.
    const plain = await mcp({ report: "performance", parameters: { ...parameters, status: undefined } });
    expect((plain.structuredContent as { meta: Meta }).meta.status).toEqual(["pending", "approved"]);
    expect(plain.content[0]?.text.split("\n").at(-1)).toBe("Amounts in USD, days in UTC.");

    const accounts = await mcp({ report: "account-metrics", parameters: { status: ALL } });
    const rows = (accounts.structuredContent as { data: { metrics: Record<string, number> }[]; meta: Meta }).data;
    expect(rows[0]?.metrics.deposits).toBe(6);
  });

  it("answers a bad status as a tool error naming status", async () => {
    const result = await mcp({ report: "performance", parameters: { status: "paid" } });
    expect(result.isError).toBe(true);
    expect(result.content[0]?.text).toMatch(/^status /);
  });
});
