import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { foldRollupBlocks } from "../src/features/reports/blocks.js";
import { splitWindow } from "../src/features/reports/exact-window.js";
import { writeClicks } from "../src/features/tracking/index.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import type { Tenancy, TestApp } from "./helpers/app.js";
import { catalogOf, clickOf, performanceReport, startWithTraffic } from "./helpers/reports.js";
import { prng } from "./helpers/workload.js";

// Date-time windows are exact: each report counts the events inside the window, compared here
// with counts made from the raw events tables (clicks, conversions) over the same instants.

const NOW = new Date("2026-06-30T18:00:00.000Z");

let t: TestApp;
let who: Tenancy;

/** Two clicks on the tenant's first link at `at`, as the click writer stores them. */
async function clicksAt(tenantId: string, ats: Date[], tag: string): Promise<void> {
  const { links, sources } = await catalogOf(t.testDb.db, tenantId);
  const [link] = links;
  const [source] = sources;
  if (!link || source === undefined) throw new Error("the tenant has no link or traffic source");
  const clicks = ats.map((at, i) =>
    clickOf({
      id: `clk_dt_${tag}_${i}`,
      tenantId,
      at,
      linkId: Number(link.id),
      accountId: Number(link.account_id),
      brandId: Number(link.brand_id),
      programId: Number(link.program_id),
      trafficSourceId: source,
      userAgent: "Mozilla/5.0 Datetime",
      ip: `198.51.100.${i + 1}`,
      country: "DE",
    }),
  );
  expect(await writeClicks(t.testDb.db, clicks, NOW)).toBe(clicks.length);
}

beforeAll(async () => {
  // 40 days of clicks and conversions of every type at all hours, over 12 accounts (and another
  // tenant's traffic, which no report of `who` may count).
  ({ t, who } = await startWithTraffic(NOW, {
    who: { days: 40, clicks: 2500, seed: 11, accounts: 12, batchSize: 500 },
    other: { days: 10, clicks: 200, seed: 12, batchSize: 200 },
  }));
  const db = t.testDb.db;
  // Clicks on a day older than the raw events are kept (120 days): at 06:00 and at 18:00.
  const old = Date.parse("2026-02-20T00:00:00Z");
  await clicksAt(who.tenantId, [new Date(old + 6 * HOUR_MS), new Date(old + 18 * HOUR_MS)], "old");
  // What the job rollup-blocks has done by then: windows read blocks, prefixes and tails.
  await foldRollupBlocks(db, NOW);
  // Then more traffic on days already folded: their blocks are stale and read as days.
  await generateTraffic(db, who.tenantId, { days: 6, clicks: 300, now: NOW, seed: 13, batchSize: 300 });
}, 300_000);
afterAll(async () => t?.close());

interface Window {
  from: string;
  to: string;
}

/**
 * The stats compared, per group of `keys` (raw event columns, their none as 0 or ''), made from
 * the raw events with `from <= time <= to`.
 */
async function fromRaw(keys: string[], w: Window): Promise<string[]> {
  const dims = (table: "clicks" | "conversions") =>
    keys.map((k) =>
      k === "country"
        ? "coalesce(country, '') as country"
        : k === "day"
          ? `((${table === "clicks" ? "at" : "occurred_at"} at time zone 'UTC')::date)::text as day`
          : `coalesce(${k}, 0)::int as ${k}`,
    );
  const rows = await t.testDb.db.query<Record<string, unknown>>(
    `with ev as (
       select ${[...dims("clicks"), "1 as clicks", "is_unique::int as uniq", "0 as ftd", "0::numeric as comm"].join(", ")}
         from clicks where tenant_id = $1 and at >= $2::timestamptz and at <= $3::timestamptz
       union all
       select ${[
         ...dims("conversions"),
         "0",
         "0",
         "(type = 'FirstTimeDeposit')::int",
         "case when type in ('CpaCommission', 'RevShareCommission', 'FlatFeeCommission') then coalesce(value, 0) else 0 end",
       ].join(", ")}
         from conversions where tenant_id = $1 and occurred_at >= $2::timestamptz and occurred_at <= $3::timestamptz
           and status in ('pending', 'approved')
     )
     select ${[...keys, "sum(clicks)::int as clicks", "sum(uniq)::int as uniq", "sum(ftd)::int as ftd", "round(sum(comm), 4)::float8 as commission"].join(", ")}
       from ev ${keys.length > 0 ? `group by ${keys.join(", ")}` : ""}`,
    [who.tenantId, w.from, w.to],
  );
  return rows.map((r) => JSON.stringify({ ...r })).sort();
}

const report = (query: Record<string, string | number>) => performanceReport(t, who, query);

const STATS = "clicks,uniqueClicks,ftd,commission";
const statsOf = (r: Record<string, unknown>) => ({
  clicks: r.clicks,
  uniq: r.uniqueClicks,
  ftd: r.firstTimeDeposit,
  commission: r.commission,
});

/** The report by `fields` over `w`, keyed like fromRaw's rows (`fields` maps a field to its raw column). */
async function keyed(fields: Record<string, string>, w: Window): Promise<string[]> {
  const { data } = await report({
    ...(Object.keys(fields).length > 0 ? { fields: Object.keys(fields).join(",") } : {}),
    stats: STATS,
    conversionDateFrom: w.from,
    conversionDateTo: w.to,
    limit: 999,
  });
  return data
    .map((r) =>
      JSON.stringify({
        ...Object.fromEntries(
          Object.entries(fields).map(([field, column]) => [
            column,
            field === "country" ? (r.country ?? "") : field === "date" ? r.date : (r[`${field}Id`] ?? 0),
          ]),
        ),
        ...statsOf(r),
      }),
    )
    .sort();
}

/** Every shape of the performance report over `w` equals the raw events over the same instants. */
async function expectExact(w: Window): Promise<number> {
  const [total] = await fromRaw([], w);
  const totalRow = (await report({ stats: STATS, conversionDateFrom: w.from, conversionDateTo: w.to })).data[0];
  expect(JSON.stringify(statsOf(totalRow ?? {})), `${w.from}..${w.to} total`).toBe((total ?? "").replace(/null/g, "0"));
  for (const fields of [
    { account: "account_id" },
    { account: "account_id", trafficSource: "traffic_source_id" },
    { brand: "brand_id", country: "country" },
    { link: "link_id" },
    { date: "day" },
    { date: "day", account: "account_id" },
  ]) {
    expect(await keyed(fields, w), `${w.from}..${w.to} by ${Object.keys(fields)}`).toEqual(
      await fromRaw(Object.values(fields), w),
    );
  }
  // By conversion type: the rows add up to the total.
  const { data } = await report({
    fields: "conversionType",
    stats: "clicks,ftd",
    conversionDateFrom: w.from,
    conversionDateTo: w.to,
  });
  const sum = (key: string) => data.reduce((n, r) => n + Number(r[key] ?? 0), 0);
  expect({ clicks: sum("clicks"), ftd: sum("firstTimeDeposit") }).toEqual({
    clicks: totalRow?.clicks,
    ftd: totalRow?.firstTimeDeposit,
  });
  return Number(totalRow?.clicks ?? 0);
}

const iso = (ms: number) => new Date(ms).toISOString();

describe("a date-time window is exact", () => {
  it("splits a window into whole UTC days and the partial edge days", () => {
    const split = (from: string, to: string) => {
      const s = splitWindow({ from: new Date(from), to: new Date(to) }, NOW);
      return { days: s.days, raw: s.raw.map((r) => [r.from.toISOString(), r.to.toISOString(), r.open]) };
    };
    expect(split("2026-06-01T00:00:00Z", "2026-06-03T23:59:59.999Z")).toEqual({
      days: ["2026-06-01", "2026-06-03"],
      raw: [],
    });
    expect(split("2026-06-01T23:00:00Z", "2026-06-02T01:00:00Z")).toEqual({
      days: null,
      raw: [
        ["2026-06-01T23:00:00.000Z", "2026-06-02T00:00:00.000Z", true],
        ["2026-06-02T00:00:00.000Z", "2026-06-02T01:00:00.000Z", false],
      ],
    });
    expect(split("2026-06-01T10:00:00Z", "2026-06-01T10:30:00Z")).toEqual({
      days: null,
      raw: [["2026-06-01T10:00:00.000Z", "2026-06-01T10:30:00.000Z", false]],
    });
    expect(split("2026-06-01T00:00:00Z", "2026-06-04T12:00:00Z")).toEqual({
      days: ["2026-06-01", "2026-06-03"],
      raw: [["2026-06-04T00:00:00.000Z", "2026-06-04T12:00:00.000Z", false]],
    });
    // An edge day older than the raw events' 120 days is read whole.
    expect(split("2026-02-20T12:00:00Z", "2026-06-04T12:00:00Z")).toEqual({
      days: ["2026-02-20", "2026-06-03"],
      raw: [["2026-06-04T00:00:00.000Z", "2026-06-04T12:00:00.000Z", false]],
    });
  });

  it("the issue's window (23:00 to 01:00 the next day) counts those two hours, not two days", async () => {
    const day = Date.parse("2026-06-20T00:00:00Z");
    const w = { from: iso(day - HOUR_MS), to: iso(day + HOUR_MS) };
    const clicks = await expectExact(w);
    const [whole] = (
      await report({ stats: "clicks", conversionDateFrom: "2026-06-19", conversionDateTo: "2026-06-20" })
    ).data;
    expect(clicks).toBeGreaterThan(0);
    expect(Number(whole?.clicks)).toBeGreaterThan(clicks * 4);
  });

  it("equals the raw events over random windows with random hours and minutes", async () => {
    const rnd = prng(20261101);
    const windows: Window[] = [];
    for (let i = 0; i < 10; i++) {
      // A start in the last 42 days at a random minute and second, a length from a minute to 30 days.
      const start = NOW.getTime() - rnd.int(0, 42 * 24 * 60) * 60_000 - rnd.int(0, 59_999);
      const length = rnd.chance(0.3) ? rnd.int(1, 24 * 60) * 60_000 : rnd.int(1, 30 * 24 * 60) * 60_000;
      windows.push({ from: iso(start), to: iso(start + length) });
    }
    // An edge on a whole day, the other not; and windows ending later today (today is partial).
    const midnight = Date.parse("2026-06-10T00:00:00Z");
    windows.push({ from: iso(midnight), to: iso(midnight + 9 * DAY_MS + 7 * HOUR_MS + 13 * 60_000) });
    windows.push({ from: iso(midnight + 5 * HOUR_MS + 59 * 60_000), to: iso(midnight + 5 * DAY_MS - 1) });
    windows.push({ from: iso(NOW.getTime() - 29 * DAY_MS - 3 * HOUR_MS), to: iso(NOW.getTime() + 2 * HOUR_MS) });
    windows.push({ from: iso(NOW.getTime() - 6 * HOUR_MS), to: iso(NOW.getTime() - HOUR_MS) });
    // A date-time with an offset: 08:30 at +02:00 is 06:30 UTC.
    windows.push({ from: "2026-06-15T08:30:00+02:00", to: "2026-06-18T08:30:00.250+02:00" });
    let counted = 0;
    for (const w of windows) counted += await expectExact(w);
    expect(counted).toBeGreaterThan(500);
  }, 120_000);

  it("the composites count the window's events exactly, in both windows", async () => {
    const metrics = { from: "2026-06-05T13:15:00Z", to: "2026-06-21T02:45:30Z" };
    const comparison = { from: "2026-05-25T22:00:00Z", to: "2026-05-26T03:00:00Z" };
    const res = await t.call({
      method: "GET",
      url: `/api/v1/composites/accounts/metrics?${new URLSearchParams({
        metricsFrom: metrics.from,
        metricsTo: metrics.to,
        comparisonFrom: comparison.from,
        comparisonTo: comparison.to,
        sortBy: "-clicks",
        limit: "500",
      })}`,
      headers: { authorization: who.apiKey },
    });
    expect(res.statusCode, res.body).toBe(200);
    const items = res.json().data as {
      id: number;
      metrics: Record<string, number>;
      comparisonMetrics: Record<string, number>;
    }[];
    const expected = async (w: Window) =>
      new Map(
        (await fromRaw(["account_id"], w)).map((row) => {
          const { account_id, ...stats } = JSON.parse(row) as Record<string, number>;
          return [account_id, stats];
        }),
      );
    const inMetrics = await expected(metrics);
    const inComparison = await expected(comparison);
    const zero = { clicks: 0, uniq: 0, ftd: 0, commission: 0 };
    const pick = (m: Record<string, number>) => ({
      clicks: m.clicks,
      uniq: m.uniqueClicks,
      ftd: m.firstTimeDeposit,
      commission: m.commission,
    });
    for (const item of items) {
      expect(pick(item.metrics), `account ${item.id}`).toEqual(inMetrics.get(item.id) ?? zero);
      expect(pick(item.comparisonMetrics), `account ${item.id}`).toEqual(inComparison.get(item.id) ?? zero);
    }
    expect(items.some((i) => (i.comparisonMetrics.clicks ?? 0) > 0)).toBe(true);
    // Sorted by clicks over the exact window.
    const clicks = items.map((i) => i.metrics.clicks ?? 0);
    expect(clicks).toEqual([...clicks].sort((a, b) => b - a));
  });

  it("MCP's run_report answers the same exact numbers", async () => {
    const w = { from: "2026-06-12T21:10:00Z", to: "2026-06-14T04:20:00Z" };
    const key = await t.call({
      method: "POST",
      url: "/api/v1/api-tokens",
      headers: { authorization: who.bearer },
      payload: { name: "MCP datetime", scopes: ["reports.read"] },
    });
    expect(key.statusCode, key.body).toBe(201);
    const res = await t.call({
      method: "POST",
      url: "/mcp",
      headers: {
        authorization: `ApiKey ${key.json().data.token}`,
        "content-type": "application/json",
        accept: "application/json, text/event-stream",
      },
      payload: {
        jsonrpc: "2.0",
        id: 1,
        method: "tools/call",
        params: {
          name: "run_report",
          arguments: {
            report: "performance",
            parameters: { fields: ["account"], stats: STATS, conversionDateFrom: w.from, conversionDateTo: w.to },
          },
        },
      },
    });
    expect(res.statusCode, res.body).toBe(200);
    const body = JSON.parse(res.body) as { result: { structuredContent: { data: Record<string, unknown>[] } } };
    const rows = body.result.structuredContent.data
      .map((r) => JSON.stringify({ account_id: r.accountId ?? 0, ...statsOf(r) }))
      .sort();
    expect(rows).toEqual(await fromRaw(["account_id"], w));
    expect(rows).toEqual(await keyed({ account: "account_id" }, w));
  });

  it("an edge older than the raw events' retention is read at day grain, as documented", async () => {
    // The raw clicks of that day are still here in this test, but a report cannot rely on them.
    const widened = await report({
      stats: "clicks",
      fields: "date",
      conversionDateFrom: "2026-02-20T12:00:00Z",
      conversionDateTo: "2026-02-21T00:00:00Z",
    });
    expect(widened.data).toEqual([{ date: "2026-02-20", clicks: 2 }]);
    // The same window within the retention is exact.
    const exact = await report({
      stats: "clicks",
      conversionDateFrom: iso(NOW.getTime() - 3 * DAY_MS - 12 * HOUR_MS),
      conversionDateTo: iso(NOW.getTime() - 3 * DAY_MS),
    });
    const [raw] = await fromRaw([], {
      from: iso(NOW.getTime() - 3 * DAY_MS - 12 * HOUR_MS),
      to: iso(NOW.getTime() - 3 * DAY_MS),
    });
    expect(exact.data[0]?.clicks).toBe((JSON.parse(raw ?? "{}") as { clicks: number }).clicks);
  });

  it("a whole-day date-time window equals the date window", async () => {
    const byDate = await keyed({ account: "account_id" }, { from: "2026-06-03", to: "2026-06-09" });
    const byTime = await keyed(
      { account: "account_id" },
      { from: "2026-06-03T00:00:00Z", to: "2026-06-09T23:59:59.999Z" },
    );
    expect(byTime).toEqual(byDate);
    expect(byDate).toEqual(
      await fromRaw(["account_id"], { from: "2026-06-03T00:00:00Z", to: "2026-06-09T23:59:59.999Z" }),
    );
  });
});
