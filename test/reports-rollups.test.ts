import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { generateTraffic } from "../src/features/demo/traffic.js";
import { foldRollupBlocks } from "../src/features/reports/blocks.js";
import { findReport } from "../src/features/reports/index.js";
import {
  chooseRollup,
  findRollup,
  ROLLUP_SOURCES,
  readBlockState,
  windowPieces,
} from "../src/features/reports/sources.js";
import { type Click, readConversion, recordConversions, writeClicks } from "../src/features/tracking/index.js";
import {
  COARSE_ROLLUPS,
  DAILY_DIMENSIONS,
  DAY_ROWS,
  EPOCH_DAYS,
  REPORT_MEASURES,
  ROLLUP_SPANS,
  TAIL_DAYS,
} from "../src/features/tracking/rollups.js";
import { type Queryable, statementText } from "../src/platform/db/index.js";
import { DAY_MS } from "../src/platform/durations.js";
import { seedTenancy, type Tenancy, type TestApp } from "./helpers/app.js";
import { clickThrough, createVia, seedCatalog } from "./helpers/catalog.js";
import {
  catalogOf,
  clickOf,
  type LinkRow,
  performanceReport,
  putUnitRates,
  startWithTraffic,
} from "./helpers/reports.js";
import { prng } from "./helpers/workload.js";

const NOW = new Date("2026-06-30T18:00:00.000Z");
const day = (daysBefore: number) => new Date(NOW.getTime() - daysBefore * DAY_MS).toISOString().slice(0, 10);

let t: TestApp;
let who: Tenancy;
let other: Tenancy;

/** Clicks at random times of the last `days` days, on random links and sources. */
function randomClicks(
  rnd: ReturnType<typeof prng>,
  tenantId: string,
  cat: { links: LinkRow[]; sources: number[] },
  n: number,
  days: number,
): Click[] {
  return Array.from({ length: n }, (_, i) => {
    const link = rnd.pick(cat.links);
    return clickOf({
      id: `clk_rollup_${tenantId.slice(-6)}_${rnd.int(0, 1e9)}_${i}`,
      tenantId,
      at: new Date(NOW.getTime() - rnd.int(0, days * DAY_MS)),
      linkId: Number(link.id),
      accountId: Number(link.account_id),
      brandId: Number(link.brand_id),
      programId: Number(link.program_id),
      trafficSourceId: rnd.pick(cat.sources),
      trackerName: rnd.chance(0.5) ? rnd.pick(["alpha-list", "beta-list"]) : null,
      userAgent: rnd.pick(["Mozilla/5.0 A", "Mozilla/5.0 B"]),
      ip: `192.0.2.${rnd.int(1, 6)}`,
      country: rnd.pick([null, "DE", "SE", "GB"]),
    });
  });
}

beforeAll(async () => {
  // 100 days of history over 24 accounts, in small batches: blocks of every span, and past ones.
  ({ t, who, other } = await startWithTraffic(NOW, {
    who: { days: 100, clicks: 3000, seed: 5, accounts: 24, batchSize: 400 },
    other: { days: 20, clicks: 300, seed: 6, batchSize: 150 },
  }));
  const db = t.testDb.db;

  const rnd = prng(20260630);
  const cat = await catalogOf(t.testDb.db, who.tenantId);
  // A batch written twice (a retry after an unknown outcome): the second time writes nothing.
  const batch = randomClicks(rnd, who.tenantId, cat, 300, 70);
  expect(await writeClicks(db, batch, NOW)).toBe(300);
  expect(await writeClicks(db, batch, NOW)).toBe(0);
  // Half of it again with new clicks: only the new ones count.
  const mixed = [...batch.slice(0, 150), ...randomClicks(rnd, who.tenantId, cat, 100, 3)];
  expect(await writeClicks(db, mixed, NOW)).toBe(100);

  // Conversions on those clicks and on none, some of every type, sent twice: the second batch is
  // all duplicates and adds nothing.
  const types = ["Signup", "FirstTimeDeposit", "Qualifier", "Deposit", "CpaCommission", "RevShareCommission"];
  const inputs = Array.from({ length: 120 }, (_, i) => {
    const type = rnd.pick(types);
    const value = type === "Signup" || type === "Qualifier" ? 0 : (rnd.int(-500, 90_000) / 100).toFixed(2);
    return {
      type: type === "RevShareCommission" || Number(value) >= 0 ? type : "RevShareCommission",
      clickId: rnd.chance(0.85) ? rnd.pick(batch).id : null,
      externalId: `rollup-${i}`,
      value,
      currency: "EUR",
      occurredAt: new Date(NOW.getTime() - rnd.int(0, 60 * DAY_MS)).toISOString(),
    };
  });
  const valid = inputs.map((input) => readConversion(input, "", NOW));
  const first = await db.transaction((tx) => recordConversions(tx, who.tenantId, valid, NOW));
  expect(first.filter((r) => r.duplicate)).toHaveLength(0);
  const again = await db.transaction((tx) => recordConversions(tx, who.tenantId, valid, NOW));
  expect(again.every((r) => r.duplicate)).toBe(true);
}, 300_000);
afterAll(async () => t?.close());

/** A table's rows as text, keyed by its key columns, for an exact comparison. */
async function rowsOf(sql: string, params: unknown[], keys: string[]): Promise<Record<string, string>> {
  const rows = await t.testDb.db.query<Record<string, string>>(sql, params);
  const out: Record<string, string> = {};
  for (const row of rows) {
    const key = keys.map((k) => row[k]).join("|");
    expect(out[key], key).toBeUndefined();
    out[key] = [...REPORT_MEASURES, DAY_ROWS].map((m) => row[m]).join("|");
  }
  return out;
}

/** The measures as text, summed or not; with `dayRows` (a spanned rollup's) its day_rows, else none. */
const measuresText = (sum: boolean, dayRows: "stored" | "counted" | "none" = "none") =>
  [
    ...REPORT_MEASURES.map((m) =>
      m.endsWith("_amount")
        ? `(${sum ? `sum(${m})` : m})::numeric(24, 4)::text as ${m}`
        : `(${sum ? `sum(${m})` : m})::bigint::text as ${m}`,
    ),
    `${{ stored: DAY_ROWS, counted: "count(distinct x.first)", none: "null" }[dayRows]}::text as ${DAY_ROWS}`,
  ].join(", ");

/**
 * Each spanned block's rows made here from daily_rollups of tenant $1: a day (x.first) goes to
 * the aligned blocks of the spans $2 that hold it, to the prefixes of its epoch (EPOCH_DAYS)
 * that end on or after it, those whose span is not one of $2, and to the tails (TAIL_DAYS) ending
 * on $3 that hold it, those that are neither an aligned block nor a prefix; blocks ending after
 * $3 are left out.
 */
const blocksFromDays = (keys: readonly string[]) => `
  select x.span::text as span, x.day::text as day, ${keys.map((k) => `x.${k}::text as ${k}`).join(", ")},
         ${measuresText(true, "counted")}
    from (select b.span, b.day, r.day as first, ${[...keys, ...REPORT_MEASURES].map((c) => `r.${c}`).join(", ")}
            from daily_rollups r
            cross join lateral (
              select s.span, r.day - ((((r.day - date '1970-01-01') % s.span) + s.span) % s.span) as day
                from unnest($2::int[]) as s (span)
              union all
              select p.span, r.day - ((((r.day - date '1970-01-01') % ${EPOCH_DAYS}) + ${EPOCH_DAYS}) % ${EPOCH_DAYS})
                from generate_series((((r.day - date '1970-01-01') % ${EPOCH_DAYS}) + ${EPOCH_DAYS}) % ${EPOCH_DAYS} + 1,
                                     ${EPOCH_DAYS}) as p (span)
               where p.span <> all($2::int[])
              union all
              select t.span, $3::date - (t.span - 1)
                from generate_series(greatest(2, $3::date - r.day + 1), ${TAIL_DAYS}) as t (span)
               where r.day <= $3::date
                 and not (t.span = any($2::int[])
                          and ((($3::date - (t.span - 1) - date '1970-01-01') % t.span) + t.span) % t.span = 0)
                 and ((($3::date - (t.span - 1) - date '1970-01-01') % ${EPOCH_DAYS}) + ${EPOCH_DAYS}) % ${EPOCH_DAYS} <> 0) b
           where r.tenant_id = $1) x
   group by x.span, x.day, ${keys.map((k) => `x.${k}`).join(", ")}
  having x.span = 1 or x.day + (x.span - 1) <= $3::date`;

describe("concurrent writers", () => {
  it.runIf(process.env.TEST_DATABASE_URL)(
    "click batches and conversion batches writing the same rows at once all succeed (PostgreSQL)",
    async () => {
      if (t.testDb.kind !== "postgres") return;
      const db = t.testDb.db;
      const rnd = prng(777);
      const cat = await catalogOf(t.testDb.db, who.tenantId);
      const clicks = randomClicks(rnd, who.tenantId, cat, 1200, 2);
      await writeClicks(db, clicks.slice(0, 200), NOW);
      const writers: Promise<unknown>[] = [];
      for (let i = 0; i < 4; i++) {
        // Each batch in its own order: the writers sort the rows themselves.
        writers.push(writeClicks(db, clicks.slice(200 + i * 250, 450 + i * 250).reverse(), NOW));
        const items = Array.from({ length: 60 }, (_, n) =>
          readConversion(
            {
              type: "Deposit",
              value: "10.50",
              currency: "EUR",
              clickId: rnd.pick(clicks.slice(0, 200)).id,
              externalId: `race-${i}-${n}`,
            },
            "",
            NOW,
          ),
        );
        writers.push(db.transaction((tx) => recordConversions(tx, who.tenantId, i % 2 ? items.reverse() : items, NOW)));
      }
      await Promise.all(writers);
    },
  );
});

describe("coarser rollups", () => {
  it("hold the workload it means them to hold", async () => {
    const [row] = await t.testDb.db.query<{ days: number; conversions: number; zero: number }>(
      `select count(distinct day)::int as days,
              (select count(*)::int from conversions where tenant_id = $1) as conversions,
              count(*) filter (where account_id = 0)::int as zero
         from daily_rollups where tenant_id = $1`,
      [who.tenantId],
    );
    expect(row?.days).toBeGreaterThan(90);
    expect(row?.conversions).toBeGreaterThan(300);
    // Conversions without a click make rows with no account.
    expect(row?.zero).toBeGreaterThan(0);
  });

  for (const rollup of COARSE_ROLLUPS) {
    it(`${rollup.table} equals daily_rollups summed to its keys${rollup.spanned ? ", for every span once folded" : ""}`, async () => {
      // The blocks are written by the job, through the day before NOW.
      const fold = await foldRollupBlocks(t.testDb.db, NOW);
      expect(fold.foldedThrough).toBe(day(1));
      // device_rollups' facts are no keys of daily_rollups: summed over them (and checked against
      // the raw events below).
      const shared = rollup.keys.filter((k) => DAILY_DIMENSIONS.includes(k));
      for (const tenant of [who, other]) {
        const keys = [...(rollup.spanned ? ["span"] : []), "day", ...shared];
        const select = keys.map((k) => `${k}::text as ${k}`).join(", ");
        const actual = await rowsOf(
          shared.length === rollup.keys.length
            ? `select ${select}, ${measuresText(false, rollup.spanned ? "stored" : "none")}
             from ${rollup.table} where tenant_id = $1`
            : `select ${select}, ${measuresText(true)} from ${rollup.table} where tenant_id = $1 group by ${keys.join(", ")}`,
          [tenant.tenantId],
          keys,
        );
        // The same sums made here from daily_rollups: days, and blocks by their first day.
        const expected = await rowsOf(
          rollup.spanned
            ? blocksFromDays(shared)
            : `select ${select}, ${measuresText(true)} from daily_rollups where tenant_id = $1 group by ${keys.join(", ")}`,
          rollup.spanned ? [tenant.tenantId, [...ROLLUP_SPANS], day(1)] : [tenant.tenantId],
          keys,
        );
        expect(Object.keys(actual).length).toBeGreaterThan(10);
        expect(actual).toEqual(expected);
      }
    });
  }

  it("sub_id_a_rollups equals the raw clicks and conversions counted by their click's pa", async () => {
    const count = (table: string, at: string, what: string, where: string) =>
      `select (${at} at time zone 'UTC')::date::text as day, coalesce(parameter_a, '') as value, ${what}
         from ${table} where tenant_id = $1 ${where} group by 1, 2`;
    const rollup = await t.testDb.db.query<Record<string, string>>(
      `select day::text as day, parameter_a as value, sum(clicks)::int as clicks, sum(signup_count + ftd_count)::int as conversions
         from sub_id_a_rollups where tenant_id = $1 group by 1, 2 having sum(clicks) + sum(signup_count + ftd_count) > 0 order by 1, 2`,
      [who.tenantId],
    );
    const clicks = await t.testDb.db.query<Record<string, string>>(
      count("clicks", "at", "count(*) filter (where bot_reason is null)::int as n", ""),
      [who.tenantId],
    );
    const conversions = await t.testDb.db.query<Record<string, string>>(
      count(
        "conversions",
        "occurred_at",
        "count(*)::int as n",
        "and status in ('pending', 'approved') and type in ('Signup', 'FirstTimeDeposit')",
      ),
      [who.tenantId],
    );
    const expected = new Map<string, { day: string; value: string; clicks: number; conversions: number }>();
    for (const [rows, measure] of [
      [clicks, "clicks"],
      [conversions, "conversions"],
    ] as const) {
      for (const r of rows) {
        const key = `${r.day}|${r.value}`;
        const row = expected.get(key) ?? { day: String(r.day), value: String(r.value), clicks: 0, conversions: 0 };
        row[measure] += Number(r.n);
        expected.set(key, row);
      }
    }
    const sorted = [...expected.values()]
      .filter((r) => r.clicks + r.conversions > 0)
      .sort((a, b) => (a.day + a.value < b.day + b.value ? -1 : 1));
    expect(new Set(rollup.map((r) => r.value)).size).toBeGreaterThan(10);
    expect(rollup).toEqual(sorted);
  });

  it("device_rollups equals the raw clicks and conversions counted by their device, OS and browser", async () => {
    const keys = ["day", "device", "os", "browser"];
    const actual = await t.testDb.db.query<Record<string, string>>(
      `select day::text as day, device, os, browser, sum(clicks)::text as clicks, sum(bot_clicks)::text as bots,
              sum(ftd_count + signup_count + deposit_count)::text as conversions
         from device_rollups where tenant_id = $1 group by 1, 2, 3, 4
       having sum(clicks) + sum(bot_clicks) + sum(ftd_count + signup_count + deposit_count) > 0 order by 1, 2, 3, 4`,
      [who.tenantId],
    );
    const expected = await t.testDb.db.query<Record<string, string>>(
      `select day::text as day, device, os, browser, sum(clicks)::text as clicks, sum(bots)::text as bots,
              sum(conversions)::text as conversions
         from (select (at at time zone 'UTC')::date as day, coalesce(device, '') as device, coalesce(os, '') as os,
                      coalesce(browser, '') as browser, (bot_reason is null)::int as clicks,
                      (bot_reason is not null)::int as bots, 0 as conversions
                 from clicks where tenant_id = $1
               union all
               select (occurred_at at time zone 'UTC')::date, coalesce(device, ''), coalesce(os, ''),
                      coalesce(browser, ''), 0, 0, (type in ('Signup', 'FirstTimeDeposit', 'Deposit'))::int
                 from conversions where tenant_id = $1 and status in ('pending', 'approved')) e
        group by 1, 2, 3, 4 having sum(clicks) + sum(bots) + sum(conversions) > 0 order by 1, 2, 3, 4`,
      [who.tenantId],
    );
    // The demo's agents: a phone, a desktop, and the unknown of conversions without a click.
    expect(new Set(actual.map((r) => r.device))).toEqual(new Set(["mobile", "desktop", ""]));
    expect(actual.map((r) => keys.map((k) => r[k]).join("|")).length).toBeGreaterThan(100);
    expect(actual).toEqual(expected);
  });
});

describe("rollup choice", () => {
  it("picks the smallest rollup with every column", () => {
    const table = (columns: string[]) => chooseRollup(columns).table;
    expect(table([])).toBe("brand_rollups");
    expect(table(["brand_id", "program_id", "traffic_source_id", "country"])).toBe("brand_rollups");
    expect(table(["account_id"])).toBe("account_rollups");
    expect(table(["account_id", "program_id"])).toBe("account_rollups");
    expect(table(["traffic_source_id", "account_id"])).toBe("account_source_rollups");
    expect(table(["account_id", "brand_id"])).toBe("daily_rollups");
    expect(table(["link_id"])).toBe("daily_rollups");
    expect(table(["tracker_id", "country"])).toBe("daily_rollups");
    expect(table(["device"])).toBe("device_rollups");
    expect(table(["os", "browser", "traffic_source_id", "brand_id"])).toBe("device_rollups");
    expect(findRollup(["device", "account_id"])).toBeUndefined();
    expect(table(["parameter_a", "traffic_source_id"])).toBe("sub_id_a_rollups");
    expect(table(["parameter_b"])).toBe("sub_id_b_rollups");
    expect(findRollup(["parameter_a", "parameter_b"])).toBeUndefined();
    expect(findRollup(["parameter_a", "brand_id"])).toBeUndefined();
    expect(ROLLUP_SOURCES.map((s) => s.table)).toEqual([
      "brand_rollups",
      "account_rollups",
      "account_source_rollups",
      "device_rollups",
      "sub_id_a_rollups",
      "sub_id_b_rollups",
      "daily_rollups",
    ]);
  });

  /** The tables a report's statements read, the report run for real. */
  async function tablesRead(report: string, params: Record<string, unknown>): Promise<string[]> {
    const definition = findReport(report);
    if (!definition) throw new Error(report);
    const statements: string[] = [];
    const capturing: Queryable = {
      query: (sql, values) => {
        statements.push(statementText(sql));
        return t.testDb.db.query(sql, values);
      },
      exec: (script) => t.testDb.db.exec(script),
    };
    await definition.run(capturing, who.tenantId, params, NOW);
    return [...new Set(statements.join(" ").match(/\b\w+_rollups\b/g))].sort();
  }

  it("reads each rollup for the reports that fit it", async () => {
    const window = { conversionDateFrom: day(40), conversionDateTo: day(0) };
    const cases: [string, Record<string, unknown>, string][] = [
      ["performance", { ...window }, "brand_rollups"],
      ["performance", { ...window, fields: "date,brand,country" }, "brand_rollups"],
      ["performance", { ...window, fields: "week,program,trafficSource,conversionType" }, "brand_rollups"],
      ["performance", { ...window, fields: "month", trafficSourceId: 1, brandId: 2 }, "brand_rollups"],
      ["performance", { ...window, fields: "account", sortBy: "-clicks" }, "account_rollups"],
      ["performance", { ...window, fields: "date,account", programId: 1 }, "account_rollups"],
      ["performance", { ...window, accountId: 1 }, "account_rollups"],
      ["performance", { ...window, fields: "account,trafficSource" }, "account_source_rollups"],
      ["performance", { ...window, fields: "trafficSource", accountId: 1 }, "account_source_rollups"],
      ["performance", { ...window, fields: "link" }, "daily_rollups"],
      ["performance", { ...window, fields: "account,country" }, "daily_rollups"],
      ["performance", { ...window, fields: "brand", accountId: 1 }, "daily_rollups"],
      ["performance", { ...window, fields: "tracker" }, "daily_rollups"],
      ["performance", { ...window, fields: "device,os,browser" }, "device_rollups"],
      ["performance", { ...window, fields: "date,device,brand", trafficSourceId: 1 }, "device_rollups"],
      ["account-metrics", { sortBy: "-clicks", comparisonFrom: day(60), comparisonTo: day(31) }, "account_rollups"],
      ["account-metrics", {}, "account_rollups"],
      ["link-metrics", { sortBy: "+ftd" }, "daily_rollups"],
    ];
    for (const [report, params, table] of cases) {
      expect(await tablesRead(report, params), `${report} ${JSON.stringify(params)}`).toEqual([table]);
    }
    // No rollup keys both sub-ids, nor the device beside an account: the raw events, no rollup.
    const week = { conversionDateFrom: day(6), conversionDateTo: day(0) };
    expect(await tablesRead("performance", { ...week, fields: "parameterA" })).toEqual(["sub_id_a_rollups"]);
    expect(await tablesRead("performance", { ...week, fields: "parameterA,parameterB" })).toEqual([]);
    expect(await tablesRead("performance", { ...week, fields: "device,account" })).toEqual([]);
  });
});

describe("reports over the coarser rollups", () => {
  /** The performance report's numbers for `fields` straight from daily_rollups, by day. */
  async function fromDaily(groupBy: string[], from: string, to: string, where = "true", params: unknown[] = []) {
    const rows = await t.testDb.db.query<Record<string, unknown>>(
      `select ${[...groupBy.map((c) => `${c}::float8 as ${c}`), "sum(clicks)::float8 as clicks", "sum(unique_clicks)::float8 as uniq", "sum(ftd_count)::float8 as ftd", "round(sum(cpa_amount) + sum(revshare_amount) + sum(flatfee_amount), 4)::float8 as commission"].join(", ")}
         from daily_rollups
        where tenant_id = $1 and day between $2::date and $3::date and ${where}
        ${groupBy.length ? `group by ${groupBy.join(", ")}` : ""}`,
      [who.tenantId, from, to, ...params],
    );
    return rows.map((r) => JSON.stringify(r)).sort();
  }

  const report = (query: Record<string, string | number>) => performanceReport(t, who, query);

  it("equal daily_rollups over random windows, by account and by account and source", async () => {
    const rnd = prng(31);
    const state = await readBlockState(t.testDb.db, who.tenantId);
    let subtracting = 0;
    let tailed = 0;
    const random = Array.from({ length: 16 }, () => {
      const length = rnd.int(1, 95);
      const end = rnd.int(0, 100 - length);
      return [end + length - 1, end];
    });
    // And windows ending today or yesterday, read through the tails ending yesterday.
    const recent = [
      [29, 0],
      [6, 0],
      [89, 0],
      [40, 1],
    ];
    for (const [first, last] of [...random, ...recent] as [number, number][]) {
      const [from, to] = [day(first), day(last)];
      const pieces = windowPieces(from, to, state);
      // Windows read as a prefix minus a prefix: a group with rows before the window alone sums to nothing.
      if (pieces.some((p) => p.sign < 0)) subtracting++;
      if (pieces.some((p) => p.span > 1 && p.day === day(first) && p.span === first)) tailed++;
      const stats = "clicks,uniqueClicks,ftd,commission";
      // The report's rows keyed like fromDaily's: each field's id (as its rollup column), then the stats.
      const keyed = async (fields: Record<string, string>) => {
        const { data } = await report({
          fields: Object.keys(fields).join(","),
          stats,
          conversionDateFrom: from,
          conversionDateTo: to,
          limit: 999,
        });
        return data
          .map((r) =>
            JSON.stringify({
              ...Object.fromEntries(Object.entries(fields).map(([field, column]) => [column, r[`${field}Id`] ?? 0])),
              clicks: r.clicks,
              uniq: r.uniqueClicks,
              ftd: r.firstTimeDeposit,
              commission: r.commission,
            }),
          )
          .sort();
      };
      expect(await keyed({ account: "account_id" })).toEqual(await fromDaily(["account_id"], from, to));
      expect(await keyed({ account: "account_id", trafficSource: "traffic_source_id" })).toEqual(
        await fromDaily(["account_id", "traffic_source_id"], from, to),
      );
      const [total] = (await report({ stats, conversionDateFrom: from, conversionDateTo: to })).data;
      const [expected] = await fromDaily([], from, to);
      expect(
        JSON.stringify({
          clicks: total?.clicks,
          uniq: total?.uniqueClicks,
          ftd: total?.firstTimeDeposit,
          commission: total?.commission,
        }),
      ).toBe(expected?.replace(/null/g, "0"));
    }
    expect(subtracting).toBeGreaterThanOrEqual(3);
    expect(tailed).toBeGreaterThanOrEqual(3);
  });

  it("pages a stat-sorted breakdown by account and source the same as one whole page", async () => {
    const window = { conversionDateFrom: day(45), conversionDateTo: day(3) };
    for (const sortBy of ["-clicks", "+clicks", "ftd", "+commission", "-account"]) {
      const query = { fields: "account,trafficSource", stats: "clicks,ftd,commission", sortBy, ...window };
      const whole = await report({ ...query, limit: 999 });
      expect(whole.pagination.total).toBeGreaterThan(60);
      const paged: Record<string, unknown>[] = [];
      for (let offset = 0; offset < whole.pagination.total; offset += 7) {
        const page = await report({ ...query, offset, limit: 7 });
        expect(page.pagination.total).toBe(whole.pagination.total);
        paged.push(...page.data);
      }
      expect(paged).toEqual(whole.data);
    }
  });
});

describe("a window read as a prefix minus a prefix", () => {
  it("leaves out a group whose rows all fall before the window, in every report shape", async () => {
    const db = t.testDb.db;
    const who4 = await seedTenancy(t);
    const cat = await seedCatalog(t, who4);
    const accountB = await createVia(t, who4, "accounts", {
      name: "Account B",
      programId: cat.programId,
      username: "b",
    });
    const linkB = await createVia(t, who4, "links", {
      name: "Link B",
      accountId: accountB,
      brandId: cat.brandId,
      url: "https://brand.example/b",
    });
    const links = {
      A: { id: String(cat.linkId), account_id: String(cat.accountId) },
      B: { id: String(linkB), account_id: String(accountB) },
    };
    // A has clicks on day(20) alone, B on day(20) and day(5): the window day(15)..day(2) has B only.
    const rnd = prng(4);
    const clicksOf = (which: "A" | "B", at: string, n: number) =>
      randomClicks(
        rnd,
        who4.tenantId,
        {
          links: [{ ...links[which], brand_id: String(cat.brandId), program_id: String(cat.programId) }],
          sources: [cat.trafficSourceId],
        },
        n,
        1,
      ).map((c) => ({ ...c, at: new Date(`${at}T12:00:00Z`) }));
    await writeClicks(
      db,
      [...clicksOf("A", day(20), 3), ...clicksOf("B", day(20), 2), ...clicksOf("B", day(5), 4)],
      NOW,
    );
    await foldRollupBlocks(db, NOW);
    const window = { from: day(15), to: day(2) };
    const state = await readBlockState(db, who4.tenantId);
    expect(windowPieces(window.from, window.to, state).map((p) => p.sign)).toEqual([1, -1]);

    const report = async (query: string) => {
      const res = await t.call({
        method: "GET",
        url: `/api/v1/reports/events/performance?conversionDateFrom=${window.from}&conversionDateTo=${window.to}&${query}`,
        headers: { authorization: who4.apiKey },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json() as unknown as { data: Record<string, unknown>[]; pagination: { total: number } };
    };
    for (const fields of ["account", "account,trafficSource", "account,conversionType"]) {
      const { data, pagination } = await report(`fields=${fields}&stats=clicks`);
      expect(
        data.map((r) => [r.accountId, r.clicks]),
        fields,
      ).toEqual([[accountB, 4]]);
      expect(pagination.total).toBe(1);
    }
    // By program, filtered to A (the account rollup, one pass): no row at all.
    const onlyA = await report(`fields=program&accountId=${cat.accountId}&stats=clicks`);
    expect(onlyA.data).toEqual([]);
    expect(onlyA.pagination.total).toBe(0);
    // No fields: the one total row, zeros for A.
    expect((await report(`accountId=${cat.accountId}&stats=clicks`)).data).toEqual([{ clicks: 0 }]);
  });
});

describe("conversion type breakdown over the coarser rollups", () => {
  it("keeps a type's row where a day has it, even when a week's amounts cancel out", async () => {
    const who3 = await seedTenancy(t);
    const cat = await seedCatalog(t, who3);
    const clickId = await clickThrough(t, cat);
    await t.ctx.tracking.clicks.flush();
    // Monday 2026-06-22 +10, Tuesday -10; Thursday +5 and -5 the same day.
    const share = (value: string, at: string, n: number) =>
      readConversion(
        { type: "RevShareCommission", value, currency: "USD", clickId, externalId: `share-${n}`, occurredAt: at },
        "",
        NOW,
      );
    const items = [
      share("10.00", "2026-06-22T10:00:00Z", 1),
      share("-10.00", "2026-06-23T10:00:00Z", 2),
      share("5.00", "2026-06-25T10:00:00Z", 3),
      share("-5.00", "2026-06-25T11:00:00Z", 4),
    ];
    await t.testDb.db.transaction((tx) => recordConversions(tx, who3.tenantId, items, NOW));
    const get = async (fields: string) => {
      const res = await t.call({
        method: "GET",
        url: `/api/v1/reports/events/performance?fields=${fields}&stats=revShareCommission&conversionDateFrom=2026-06-22&conversionDateTo=2026-06-28&limit=999`,
        headers: { authorization: who3.apiKey },
      });
      expect(res.statusCode, res.body).toBe(200);
      return res.json().data as Record<string, unknown>[];
    };
    // (The click is on 2026-06-30, outside the window.)
    expect(await get("week,conversionType")).toEqual([
      { week: "2026-06-22", conversionType: "RevShareCommission", revShareCommission: 0 },
    ]);
    expect((await get("date,conversionType")).filter((r) => r.conversionType !== null)).toEqual([
      { date: "2026-06-22", conversionType: "RevShareCommission", revShareCommission: 10 },
      { date: "2026-06-23", conversionType: "RevShareCommission", revShareCommission: -10 },
    ]);
  });
});

describe("blocks of days written by the job rollup-blocks", () => {
  /** Every block row of `tenantId` (aligned and prefix) equals the sum of its days, in both spanned rollups. */
  async function expectBlocksEqualDays(tenantId: string, through: string) {
    for (const rollup of COARSE_ROLLUPS.filter((r) => r.spanned)) {
      const keys = ["span", "day", ...rollup.keys];
      const select = keys.map((k) => `${k}::text as ${k}`).join(", ");
      const actual = await rowsOf(
        `select ${select}, ${measuresText(false, "stored")} from ${rollup.table} where tenant_id = $1 and span > 1`,
        [tenantId],
        keys,
      );
      const expected = await rowsOf(
        `select * from (${blocksFromDays(rollup.keys)}) e where e.span::int > 1`,
        [tenantId, [...ROLLUP_SPANS], through],
        keys,
      );
      expect(Object.keys(actual).length).toBeGreaterThan(10);
      expect(actual).toEqual(expected);
    }
  }

  /** A 30-to-60-day account x source report of `tenant`, and the same sums from daily_rollups. */
  async function reportAndModel(tenant: Tenancy, from: string, to: string) {
    const res = await t.call({
      method: "GET",
      url: `/api/v1/reports/events/performance?fields=account,trafficSource&stats=clicks,ftd,commission&conversionDateFrom=${from}&conversionDateTo=${to}&limit=999`,
      headers: { authorization: tenant.apiKey },
    });
    expect(res.statusCode, res.body).toBe(200);
    const got = (res.json().data as Record<string, unknown>[])
      .map((r) =>
        JSON.stringify([r.accountId ?? 0, r.trafficSourceId ?? 0, r.clicks, r.firstTimeDeposit, r.commission]),
      )
      .sort();
    const model = await t.testDb.db.query<Record<string, number>>(
      `select account_id::float8 as a, traffic_source_id::float8 as s, sum(clicks)::float8 as c,
              sum(ftd_count)::float8 as f, round(sum(cpa_amount) + sum(revshare_amount) + sum(flatfee_amount), 4)::float8 as m
         from daily_rollups where tenant_id = $1 and day between $2::date and $3::date group by 1, 2`,
      [tenant.tenantId, from, to],
    );
    return { got, want: model.map((r) => JSON.stringify([r.a, r.s, r.c, r.f, r.m])).sort() };
  }

  const expectExact = async (tenant: Tenancy) => {
    for (const [from, to] of [
      [day(59), day(0)],
      [day(33), day(4)],
      [day(40), day(1)],
    ] as const) {
      const { got, want } = await reportAndModel(tenant, from, to);
      expect(got.length).toBeGreaterThan(5);
      expect(got).toEqual(want);
    }
  };

  it("keep reports exact before and after the job and after a late conversion; the job is idempotent", async () => {
    const db = t.testDb.db;
    const fresh = await seedTenancy(t);
    await putUnitRates(t, fresh);
    await generateTraffic(db, fresh.tenantId, {
      days: 70,
      clicks: 1500,
      now: NOW,
      seed: 9,
      accounts: 8,
      batchSize: 300,
    });
    // Before the job: no block of this tenant, the reports read days.
    const [none] = await db.query<{ n: number }>(
      "select count(*)::int as n from account_source_rollups where tenant_id = $1 and span > 1",
      [fresh.tenantId],
    );
    expect(none?.n).toBe(0);
    await expectExact(fresh);

    const first = await foldRollupBlocks(db, NOW);
    expect(first.foldedThrough).toBe(day(1));
    expect(first.blocks).toBeGreaterThan(10);
    await expectBlocksEqualDays(fresh.tenantId, day(1));
    await expectExact(fresh);
    // The tails end yesterday: a window ending yesterday is one of them.
    const pieces = async () => windowPieces(day(40), day(1), await readBlockState(db, fresh.tenantId));
    expect(await pieces()).toEqual([{ span: 40, day: day(40), sign: 1 }]);

    // Idempotent: a second run changes no block.
    const snapshot = async () =>
      db.query(
        `select span, day::text, account_id, traffic_source_id, program_id, clicks::text, cpa_amount::text
           from account_source_rollups where tenant_id = $1 and span > 1 order by 1, 2, 3, 4, 5`,
        [fresh.tenantId],
      );
    const before = await snapshot();
    const again = await foldRollupBlocks(db, NOW);
    expect(again.foldedThrough).toBe(day(1));
    expect(await snapshot()).toEqual(before);
    await expectBlocksEqualDays(fresh.tenantId, day(1));

    // A late conversion into a folded day: the report is exact at once (the block's days are read).
    const [click] = await db.query<{ id: string }>(
      "select id from clicks where tenant_id = $1 and at < $2 order by at desc limit 1",
      [fresh.tenantId, new Date(`${day(10)}T00:00:00Z`)],
    );
    const late = readConversion(
      {
        type: "CpaCommission",
        value: "123.45",
        currency: "EUR",
        clickId: click?.id,
        externalId: "late-1",
        occurredAt: `${day(12)}T12:00:00Z`,
      },
      "",
      NOW,
    );
    await db.transaction((tx) => recordConversions(tx, fresh.tenantId, [late], NOW));
    const [mark] = await db.query<{ n: number }>(
      "select count(*)::int as n from rollup_block_dirty where tenant_id = $1 and day = $2::date",
      [fresh.tenantId, day(12)],
    );
    expect(mark?.n).toBe(1);
    // The tails holding that day are not read until the job has written them again.
    expect((await pieces()).at(-1)).toEqual({ span: 11, day: day(11), sign: 1 });
    await expectExact(fresh);

    // The job writes the blocks of that day again; reports still exact, then idempotent again.
    const third = await foldRollupBlocks(db, NOW);
    expect(third.changedDays).toBeGreaterThanOrEqual(1);
    await expectBlocksEqualDays(fresh.tenantId, day(1));
    await expectExact(fresh);
    const after = await snapshot();
    expect(after).not.toEqual(before);
    await foldRollupBlocks(db, NOW);
    expect(await snapshot()).toEqual(after);
    expect(await pieces()).toEqual([{ span: 40, day: day(40), sign: 1 }]);

    // A day later the tails end on the new last folded day; those ending on the day before are gone.
    const later = await foldRollupBlocks(db, new Date(NOW.getTime() + DAY_MS));
    expect(later.foldedThrough).toBe(day(0));
    await expectBlocksEqualDays(fresh.tenantId, day(0));
    await expectExact(fresh);
    const moved = await readBlockState(db, fresh.tenantId);
    expect(windowPieces(day(59), day(0), moved)).toEqual([{ span: 60, day: day(59), sign: 1 }]);
  });

  it("is registered as a job, hourly at minute 5", async () => {
    const job = t.ctx.jobs.find("rollup-blocks");
    expect(job?.cron).toBe("5 * * * *");
  });
});
