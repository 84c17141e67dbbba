import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findReport } from "../src/features/reports/index.js";
import { SUB_ID_VALUES_PER_DAY, writeClicks } from "../src/features/tracking/index.js";
import { type Queryable, statementText } from "../src/platform/db/index.js";
import { migrate } from "../src/platform/db/migrate.js";
import type { Tenancy, TestApp } from "./helpers/app.js";
import { catalogOf, clickOf, performanceReport, startWithTraffic } from "./helpers/reports.js";

// The sub-id rollups (migration 0026): a day holds at most SUB_ID_VALUES_PER_DAY values of a
// sub-id; past it a new value is left out, the day is marked, and a report over it reads the raw
// events, still exact. And the migration's fill of the past: run again on the traffic the writers
// wrote, it makes the same rollups as they did.

const NOW = new Date();
const today = NOW.toISOString().slice(0, 10);

let t: TestApp;
let who: Tenancy;
let other: Tenancy;

beforeAll(async () => {
  ({ t, who, other } = await startWithTraffic(NOW, {
    who: { days: 20, clicks: 2000, seed: 11, batchSize: 250 },
    other: { days: 5, clicks: 300, seed: 12, batchSize: 150 },
  }));
});
afterAll(async () => t.close());

/** Every row of the click-fact and sub-id rollups, as text, in key order. */
async function rollupRows(db: Queryable): Promise<Record<string, string[]>> {
  const out: Record<string, string[]> = {};
  for (const [table, keys] of [
    ["device_rollups", "day, brand_id, program_id, traffic_source_id, device, os, browser, currency"],
    ["sub_id_a_rollups", "day, traffic_source_id, parameter_a, currency"],
    ["sub_id_b_rollups", "day, traffic_source_id, parameter_b, currency"],
  ] as const) {
    const rows = await db.query<{ row: string }>(
      `select concat_ws('|', tenant_id, ${keys}, clicks, unique_clicks, bot_clicks, signup_count, ftd_count,
              deposit_count, cpa_count, deposit_amount, cpa_amount, revshare_amount, flatfee_amount) as row
         from ${table}
        where clicks + bot_clicks + signup_count + ftd_count + qualifier_count + deposit_count + cpa_count
              + revshare_count + flatfee_count > 0
        order by 1`,
    );
    out[table] = rows.map((r) => r.row);
  }
  return out;
}

describe("migration 0026 fills the past", () => {
  it("with the rows the writers made, from the raw events and the conversions' clicks", async () => {
    const db = t.testDb.db;
    const written = await rollupRows(db);
    expect(written.sub_id_a_rollups?.length).toBeGreaterThan(20);
    // As before the migration: no sub-id rollups, conversions without their click's facts.
    await db.exec(`drop table sub_id_a_rollups, sub_id_b_rollups, sub_id_rollup_gaps;
      truncate device_rollups;
      update conversions set device = null, os = null, browser = null, parameter_a = null, parameter_b = null;
      delete from schema_migrations where version = 26;`);
    expect(await migrate(db)).toEqual([26]);
    expect(await rollupRows(db)).toEqual(written);
    const [facts] = await db.query<{ n: number }>(
      "select count(*)::int as n from conversions where device is not null and click_id is not null",
    );
    expect(facts?.n).toBeGreaterThan(50);
  });
});

describe("a sub-id with more values a day than the rollup holds", () => {
  it("is left out of the rollup past the cap, the day marked, and reports read the raw events", async () => {
    const db = t.testDb.db;
    const cat = await catalogOf(db, who.tenantId);
    const link = cat.links[0];
    if (!link) throw new Error("no link");
    const at = new Date(`${today}T00:00:01.000Z`);
    const click = (n: number, value: string) =>
      clickOf({
        id: `clk_cap_${n}`,
        tenantId: who.tenantId,
        at,
        linkId: Number(link.id),
        accountId: Number(link.account_id),
        brandId: Number(link.brand_id),
        programId: Number(link.program_id),
        trafficSourceId: cat.sources[0] ?? 0,
        parameterA: value,
      });
    const [before] = await db.query<{ n: number }>(
      "select count(*)::int as n from sub_id_a_rollups where tenant_id = $1 and day = $2::date",
      [who.tenantId, today],
    );
    // Up to the cap, one value a click: every one is kept.
    const room = SUB_ID_VALUES_PER_DAY - (before?.n ?? 0);
    await writeClicks(
      db,
      Array.from({ length: room }, (_, n) => click(n, `v-${n}`)),
      NOW,
    );
    const gaps = () =>
      db.query<{ day: string }>("select day::text as day from sub_id_rollup_gaps where tenant_id = $1", [who.tenantId]);
    expect(await gaps()).toEqual([]);
    // Past it: a new value is left out and the day marked; a value the day has still counts.
    await writeClicks(db, [click(room, "one-too-many"), click(room + 1, "v-1")], NOW);
    expect(await gaps()).toEqual([{ day: today }]);
    const [kept] = await db.query<{ clicks: number; missing: number }>(
      `select (select clicks::int from sub_id_a_rollups where tenant_id = $1 and day = $2::date and parameter_a = 'v-1') as clicks,
              (select count(*)::int from sub_id_a_rollups where tenant_id = $1 and parameter_a = 'one-too-many') as missing`,
      [who.tenantId, today],
    );
    expect(kept).toEqual({ clicks: 2, missing: 0 });
    // A marked day is full without counting its values again: another new value is left out too.
    await writeClicks(db, [click(room + 2, "two-too-many"), click(room + 3, "v-1")], NOW);
    const [after] = await db.query<{ clicks: number; missing: number }>(
      `select (select clicks::int from sub_id_a_rollups where tenant_id = $1 and day = $2::date and parameter_a = 'v-1') as clicks,
              (select count(*)::int from sub_id_a_rollups where tenant_id = $1 and parameter_a = 'two-too-many') as missing`,
      [who.tenantId, today],
    );
    expect(after).toEqual({ clicks: 3, missing: 0 });

    // A report over the day reads the raw events, and counts the value left out.
    const query = {
      fields: "parameterA",
      stats: "clicks",
      conversionDateFrom: today,
      conversionDateTo: today,
      limit: 999,
    };
    const statements: string[] = [];
    const capturing: Queryable = {
      query: (sql, values) => {
        statements.push(statementText(sql));
        return db.query(sql, values);
      },
      exec: (script) => db.exec(script),
    };
    await findReport("performance")?.run(capturing, who.tenantId, query, NOW);
    expect(statements.join(" ")).not.toContain("sub_id_a_rollups");
    const { data } = await performanceReport(t, who, { ...query, sortBy: "parameterA", offset: 0 });
    expect(data.length).toBeGreaterThan(100);
    const sorted = await performanceReport(t, who, { ...query, sortBy: "-clicks", limit: 999 });
    expect(sorted.data.find((r) => r.parameterA === "one-too-many")).toEqual({ parameterA: "one-too-many", clicks: 1 });
    // Over 31 days with such a day: refused, naming the window's start and why.
    const from = new Date(NOW.getTime() - 40 * 86_400_000).toISOString().slice(0, 10);
    const res = await t.call({
      method: "GET",
      url: `/api/v1/reports/events/performance?fields=parameterA&conversionDateFrom=${from}&conversionDateTo=${today}`,
      headers: { authorization: who.apiKey },
    });
    expect(res.statusCode).toBe(400);
    expect(res.body).toContain("conversionDateFrom");
    expect(res.body).toContain(`more than ${SUB_ID_VALUES_PER_DAY} values`);
    // Another tenant's days are its own: its sub-id report still reads the rollup.
    const theirs = await t.call({
      method: "GET",
      url: `/api/v1/reports/events/performance?fields=parameterA&conversionDateFrom=${from}&conversionDateTo=${today}`,
      headers: { authorization: other.apiKey },
    });
    expect(theirs.statusCode, theirs.body).toBe(200);
  });
});
