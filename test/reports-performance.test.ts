import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";
import {
  buildCatalog,
  canonical,
  daysOf,
  ENTITY_FIELDS,
  expectedPerformance,
  runWorkload,
  type Selection,
  STAT_NAMES,
  type Workload,
} from "./helpers/workload.js";

const PATH = "/api/v1/reports/events/performance";
const START = "2026-04-24T20:00:00.000Z";
const EARLY = "2026-03-20T20:00:00.000Z";

let t: TestApp;
let who: Tenancy;
let other: Tenancy;
let otherCat: CatalogFixture;
let w: Workload;
let firstDay: string;
let lastDay: string;

beforeAll(async () => {
  t = await startTestApp();
  t.clock.set(EARLY);
  who = await seedTenancy(t);
  other = await seedTenancy(t);
  otherCat = await seedCatalog(t, other);
  const catalog = await buildCatalog(t, who);
  w = await runWorkload(t, who, catalog, { seed: 424242, start: START, clicks: 520, earlyClicks: 30 });
  // Another tenant's traffic on the same days: never in our reports.
  for (let i = 0; i < 7; i++) {
    const res = await t.call({
      method: "GET",
      url: `/go/${otherCat.linkId}/${otherCat.trafficSourceId}`,
      // A browser's full user agent: a bare "Mozilla/5.0 Other" is one isbot takes for a bot's.
      headers: {
        "user-agent":
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
        "cf-ipcountry": "DE",
      },
    });
    expect(res.statusCode).toBe(302);
  }
  await t.ctx.tracking.clicks.flush();
  const signup = await t.call({
    method: "POST",
    url: "/api/v1/conversions",
    headers: { authorization: other.apiKey },
    payload: { type: "Signup" },
  });
  expect(signup.statusCode, signup.body).toBe(201);
  const days = daysOf(w);
  firstDay = days[0] as string;
  lastDay = days[days.length - 1] as string;
}, 180_000);
afterAll(async () => t?.close());

type Query = Record<string, string | number>;
const qs = (query: Query) => new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();

async function get(query: Query | string, auth: string | null = who.apiKey) {
  const search = typeof query === "string" ? query : qs(query);
  return t.call({
    method: "GET",
    url: `${PATH}${search ? `?${search}` : ""}`,
    headers: auth === null ? {} : { authorization: auth },
  });
}

/** Every row of a report, walking the pages; checks the pagination totals on the way. */
async function all(query: Query, pageSize = 999): Promise<Record<string, unknown>[]> {
  const rows: Record<string, unknown>[] = [];
  let total = -1;
  for (let offset = 0; total < 0 || offset < total; offset += pageSize) {
    const res = await get({ ...query, offset, limit: pageSize });
    expect(res.statusCode, res.body).toBe(200);
    const body = res.json();
    expect(body.code).toBe("ok");
    expect(body.pagination).toEqual({ offset, limit: pageSize, total: body.pagination?.total });
    if (total >= 0) expect(body.pagination?.total).toBe(total);
    total = body.pagination?.total as number;
    rows.push(...(body.data as Record<string, unknown>[]));
    if (body.data.length === 0) break;
  }
  expect(rows.length).toBe(total);
  return rows;
}

function selectionQuery(sel: Selection): Query {
  const { from, to, ...filters } = sel;
  return { conversionDateFrom: from, conversionDateTo: to, ...filters };
}

async function expectReport(fields: string[], sel: Selection, extra: Query = {}): Promise<Record<string, unknown>[]> {
  const rows = await all({ ...(fields.length ? { fields: fields.join(",") } : {}), ...selectionQuery(sel), ...extra });
  let expected = expectedPerformance(w, fields, sel);
  if (extra.stats !== undefined) {
    const keep = [
      ...fields.flatMap((f) => [f, `${f}Id`]),
      ...String(extra.stats)
        .split(",")
        .map((s) => (s === "ftd" ? "firstTimeDeposit" : s)),
    ];
    expected = expected.map((row) => Object.fromEntries(Object.entries(row).filter(([k]) => keep.includes(k))));
  }
  expect(canonical(rows, fields)).toEqual(canonical(expected, fields));
  return rows;
}

/** num/den at 4 places, half away from zero, in integers. */
const ratio4 = (num: number, den: number) => {
  const r = Math.floor((2 * Math.abs(num) * 10_000 + den) / (2 * den)) / 10_000;
  return num < 0 ? -r : r;
};

const addDays = (day: string, n: number) =>
  new Date(new Date(`${day}T00:00:00.000Z`).getTime() + n * 86_400_000).toISOString().slice(0, 10);

describe("performance report numbers equal the workload", () => {
  it("has the workload it means to have", () => {
    expect(lastDay >= "2026-05-01").toBe(true);
    expect(firstDay < "2026-03-25").toBe(true);
    expect(w.events.filter((e) => e.click).length).toBeGreaterThan(450);
    expect(w.events.filter((e) => e.conversion).length).toBeGreaterThan(120);
  });

  it("one total row without fields, every stat, over the whole period", async () => {
    const rows = await expectReport([], { from: firstDay, to: lastDay });
    expect(rows).toHaveLength(1);
    expect(Object.keys(rows[0] as object).sort()).toEqual([...STAT_NAMES].sort());
    // The total is not trivially zero.
    expect(rows[0]?.clicks).toBe(w.events.filter((e) => e.click).length);
  });

  const COMBOS: string[][] = [
    ["date"],
    ["week"],
    ["month"],
    ...ENTITY_FIELDS.map((f) => [f]),
    ["country"],
    ["conversionType"],
    ["date", "link", "trafficSource"],
    ["month", "brand", "conversionType"],
    ["account", "country", "tracker", "week"],
    ["conversionType", "date", "program", "trafficSource"],
    [
      "date",
      "week",
      "month",
      "brand",
      "program",
      "account",
      "link",
      "trafficSource",
      "tracker",
      "country",
      "conversionType",
    ],
  ];
  for (const fields of COMBOS) {
    it(`fields=${fields.join(",")} over the whole period and over a window`, async () => {
      const rows = await expectReport(fields, { from: firstDay, to: lastDay });
      expect(rows.length).toBeGreaterThan(1);
      await expectReport(fields, { from: "2026-04-26", to: "2026-04-29" });
    });
  }

  it("the window is whole UTC days, inclusive: clicks by click day, conversions by conversion day", async () => {
    const clickDays = daysOf(w, "click");
    const conversionDays = daysOf(w, "conversion");
    // Some conversions fall on a day without clicks (late reports), so the two are not one set.
    expect(conversionDays.some((d) => !clickDays.includes(d))).toBe(true);
    for (const day of ["2026-04-27", "2026-04-30", "2026-05-01"]) {
      const [row] = await expectReport([], { from: day, to: day });
      expect(row?.clicks).toBeGreaterThan(0);
    }
    // Date-time bounds on the days' edges select the same whole UTC days (a narrower date-time
    // window counts only its instants: test/reports-datetime.test.ts).
    const byDate = await all({ conversionDateFrom: "2026-04-27", conversionDateTo: "2026-04-28", fields: "date" });
    const byTime = await all({
      conversionDateFrom: "2026-04-27T00:00:00Z",
      conversionDateTo: "2026-04-28T23:59:59.999Z",
      fields: "date",
    });
    expect(byTime).toEqual(byDate);
    // A `+` offset sent unencoded arrives as a space and still reads as `+` (01:00 at +01:00 is
    // midnight UTC).
    const bySpace = await all({
      conversionDateFrom: "2026-04-27T01:00:00 01:00",
      conversionDateTo: "2026-04-29T00:59:59.999 01:00",
      fields: "date",
    });
    expect(bySpace).toEqual(byDate);
    expect(byDate.map((r) => r.date)).toEqual(["2026-04-27", "2026-04-28"]);
    // Two seconds around midnight are not two whole days.
    const [narrow] = await all({
      conversionDateFrom: "2026-04-27T23:59:59Z",
      conversionDateTo: "2026-04-28T00:00:01Z",
    });
    const [wide] = await all({ conversionDateFrom: "2026-04-27", conversionDateTo: "2026-04-28" });
    expect(Number(narrow?.clicks)).toBeLessThan(Number(wide?.clicks));
    // A window with no traffic: the total row is all zeros.
    const [empty] = await expectReport([], { from: "2026-01-01", to: "2026-01-31" });
    expect(empty?.clicks).toBe(0);
    expect(empty?.epc).toBe(0);
  });

  it("without dates the window is the last 30 UTC days up to today", async () => {
    const today = t.clock.now().toISOString().slice(0, 10);
    const rows = await all({ fields: "date" });
    const expected = expectedPerformance(w, ["date"], { from: addDays(today, -29), to: today });
    expect(canonical(rows, ["date"])).toEqual(canonical(expected, ["date"]));
    // The early phase and the late-reported conversions are outside it.
    expect(daysOf(w).some((d) => d < addDays(today, -29))).toBe(true);
  });

  it("a one-sided window takes the default for the other end: today, or 29 days before the end", async () => {
    const today = t.clock.now().toISOString().slice(0, 10);
    const fromOnly = await all({ fields: "date", conversionDateFrom: "2026-04-28" });
    const expectedFrom = expectedPerformance(w, ["date"], { from: "2026-04-28", to: today });
    expect(canonical(fromOnly, ["date"])).toEqual(canonical(expectedFrom, ["date"]));
    const toOnly = await all({ fields: "date", conversionDateTo: "2026-04-27" });
    const expectedTo = expectedPerformance(w, ["date"], { from: addDays("2026-04-27", -29), to: "2026-04-27" });
    expect(canonical(toOnly, ["date"])).toEqual(canonical(expectedTo, ["date"]));
    // The early phase lies before that default start.
    expect(daysOf(w).some((d) => d < addDays("2026-04-27", -29))).toBe(true);
  });

  it("a list parameter may be repeated", async () => {
    const sel = { from: firstDay, to: lastDay };
    const rows = await get(
      `${qs({ ...selectionQuery(sel), limit: 999 })}&fields=date&fields=brand&stats=clicks&stats=signups`,
    );
    expect(rows.statusCode, rows.body).toBe(200);
    const expected = expectedPerformance(w, ["date", "brand"], sel).map((r) => ({
      date: r.date,
      brand: r.brand,
      brandId: r.brandId,
      clicks: r.clicks,
      signups: r.signups,
    }));
    expect(canonical(rows.json().data, ["date", "brand"])).toEqual(canonical(expected, ["date", "brand"]));
  });

  it("filters by brand, program, account and traffic source", async () => {
    const c = w.catalog;
    const whole = { from: firstDay, to: lastDay };
    const cases: [string[], Partial<Selection>][] = [
      [["date"], { brandId: c.brands[1]?.id as number }],
      [["link", "conversionType"], { brandId: c.brands[2]?.id as number }],
      [["account"], { programId: c.programs[0]?.id as number }],
      [["week", "trafficSource"], { programId: c.programs[1]?.id as number }],
      [["link", "date"], { accountId: c.accounts[0]?.id as number }],
      [["country"], { trafficSourceId: c.sources[0]?.id as number }],
      [
        ["tracker", "conversionType"],
        { trafficSourceId: c.sources[1]?.id as number, programId: c.programs[0]?.id as number },
      ],
      [[], { accountId: c.accounts[2]?.id as number, trafficSourceId: c.sources[2]?.id as number }],
    ];
    for (const [fields, filter] of cases) {
      const rows = await expectReport(fields, { ...whole, ...filter });
      // The filter narrows, and does not empty, the report.
      expect(rows.length).toBeGreaterThan(0);
      expect(rows.some((r) => (r.clicks as number) > 0)).toBe(true);
    }
    // Filtered by an account without traffic: one zero row.
    const quiet = c.accounts.find((a) => a.name === "foxtrot")?.id as number;
    const [row] = await expectReport([], { ...whole, accountId: quiet });
    expect(row?.clicks).toBe(0);
  });

  it("derived stats of a total row are the ratio of the sums, not the average of ratios", async () => {
    const sel = { from: "2026-04-25", to: "2026-05-01" };
    const [total] = await expectReport([], sel, { stats: "clicks,signups,commission,conversionRate,epc" });
    const days = await expectReport(["date"], sel, { stats: "clicks,signups,commission,conversionRate,epc" });
    const clicks = days.reduce((s, r) => s + (r.clicks as number), 0);
    const signups = days.reduce((s, r) => s + (r.signups as number), 0);
    const commission = days.reduce((s, r) => s + Math.round((r.commission as number) * 100), 0);
    expect(total?.clicks).toBe(clicks);
    expect(total?.conversionRate).toBe(ratio4(signups, clicks));
    expect(total?.epc).toBe(ratio4(commission, clicks * 100));
    const averageRate = days.reduce((s, r) => s + (r.conversionRate as number), 0) / days.length;
    expect(Math.abs(averageRate - (total?.conversionRate as number))).toBeGreaterThan(1e-4);
  });

  it("stats select the columns; ftd is firstTimeDeposit", async () => {
    const sel = { from: firstDay, to: lastDay };
    const expected = expectedPerformance(w, ["program"], sel);
    const rows = await all({ fields: "program", stats: "ftd,clicks,epc", ...selectionQuery(sel) });
    for (const row of rows)
      expect(Object.keys(row).sort()).toEqual(["clicks", "epc", "firstTimeDeposit", "program", "programId"]);
    const pick = (r: Record<string, unknown>) => ({
      program: r.program,
      programId: r.programId,
      clicks: r.clicks,
      firstTimeDeposit: r.firstTimeDeposit,
      epc: r.epc,
    });
    expect(canonical(rows.map(pick), ["program"])).toEqual(canonical(expected.map(pick), ["program"]));
    expect(rows.some((r) => (r.firstTimeDeposit as number) > 0)).toBe(true);
    // The alias and the name together are one column; names are case-insensitive.
    const [both] = await all({ stats: "ftd,FirstTimeDeposit,CLICKS", ...selectionQuery(sel) });
    expect(Object.keys(both as object)).toEqual(["firstTimeDeposit", "clicks"]);
  });

  it("table and json carry the same numbers", async () => {
    const query = { fields: "month,account,conversionType", stats: "clicks,signups,depositAmount,epc" };
    const sel = { conversionDateFrom: firstDay, conversionDateTo: lastDay, limit: 999 };
    const json = await get({ ...query, ...sel, responseType: "json" });
    const table = await get({ ...query, ...sel, responseType: "TABLE" });
    expect(table.statusCode, table.body).toBe(200);
    const data = table.json().data as { columns: string[]; rows: unknown[][] };
    expect(data.columns).toEqual(["month", "account", "conversionType", "clicks", "signups", "depositAmount", "epc"]);
    const jsonRows = json.json().data as Record<string, unknown>[];
    expect(jsonRows.length).toBeGreaterThan(5);
    expect(data.rows).toEqual(jsonRows.map((r) => data.columns.map((c) => r[c])));
    expect(table.json().pagination).toEqual(json.json().pagination);
    // json rows carry the entity ids; table rows do not.
    expect(jsonRows.every((r) => "accountId" in r)).toBe(true);
    expect(data.columns).not.toContain("accountId");
  });

  it("limit defaults to 100 and goes up to 999", async () => {
    const fields = ["date", "link", "trafficSource", "country"];
    const sel = { from: firstDay, to: lastDay };
    const expected = expectedPerformance(w, fields, sel);
    expect(expected.length).toBeGreaterThan(100);
    const res = await get({ fields: fields.join(","), ...selectionQuery(sel) });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data).toHaveLength(100);
    expect(res.json().pagination).toEqual({ offset: 0, limit: 100, total: expected.length });
    const max = await get({ fields: fields.join(","), ...selectionQuery(sel), limit: 999 });
    expect(max.json().data).toHaveLength(Math.min(999, expected.length));
    // Small pages walk the same rows.
    const paged = await all({ fields: fields.join(","), ...selectionQuery(sel) }, 37);
    expect(canonical(paged, fields)).toEqual(canonical(expected, fields));
  });

  it("sortBy orders by a requested stat (highest first, + ascending) or field", async () => {
    const base = { fields: "link", stats: "clicks,signups", conversionDateFrom: firstDay, conversionDateTo: lastDay };
    const clicksOf = (rows: Record<string, unknown>[]) => rows.map((r) => r.clicks as number);
    const desc = clicksOf(await all({ ...base, sortBy: "clicks" }));
    expect(new Set(desc).size).toBeGreaterThan(2);
    expect(desc).toEqual([...desc].sort((a, b) => b - a));
    expect(clicksOf(await all({ ...base, sortBy: "-clicks" }))).toEqual(desc);
    const asc = clicksOf(await all({ ...base, sortBy: "+clicks" }));
    expect(asc).toEqual([...desc].sort((a, b) => a - b));
    // A + that arrives as a space.
    const res = await get(`${qs(base)}&sortBy=+clicks`);
    expect(clicksOf(res.json().data)).toEqual(asc);
    const days = await all({
      fields: "date",
      stats: "clicks",
      sortBy: "-date",
      conversionDateFrom: firstDay,
      conversionDateTo: lastDay,
    });
    const dates = days.map((r) => r.date as string);
    expect(dates).toEqual([...dates].sort().reverse());
  });

  it("another tenant's traffic is not in the report, and ours is not in theirs", async () => {
    const ours = await expectReport(["account"], { from: firstDay, to: lastDay });
    expect(ours.some((r) => r.accountId === otherCat.accountId)).toBe(false);
    const theirs = await get(
      {
        fields: "account",
        stats: "clicks,signups",
        sortBy: "clicks",
        conversionDateFrom: firstDay,
        conversionDateTo: lastDay,
      },
      other.apiKey,
    );
    expect(theirs.json().data).toEqual([
      { account: "Account", accountId: otherCat.accountId, clicks: 7, signups: 0 },
      { account: null, accountId: null, clicks: 0, signups: 1 },
    ]);
    // Filtering by another tenant's id finds nothing.
    const [row] = await all({ accountId: otherCat.accountId, conversionDateFrom: firstDay, conversionDateTo: lastDay });
    expect(row?.clicks).toBe(0);
  });
});

describe("performance report refusals", () => {
  /** A 400 whose message names `path` (or, for unknown names, the name itself) and the words. */
  const bad = async (query: Query | string, path: string, ...words: string[]) => {
    const res = await get(query);
    expect(res.statusCode, `${JSON.stringify(query)}: ${res.body}`).toBe(400);
    const body = res.json();
    expect(body.code).toBe("validation_error");
    if (words.length === 0 || !words[0]?.startsWith("Unknown")) expect(body.message).toContain(path);
    for (const word of words) expect(body.message).toContain(word);
    expect(body.data.errors[0].path).toBe(path);
  };

  it("names an unknown field or stat", async () => {
    await bad({ fields: "date,foo" }, "fields", "Unknown field 'foo'");
    await bad({ stats: "clicks,bar" }, "stats", "Unknown stat 'bar'");
    await bad({ fields: "clicks" }, "fields", "Unknown field 'clicks'");
    await bad({ stats: "date" }, "stats", "Unknown stat 'date'");
  });

  it("refuses a limit outside 1..999", async () => {
    await bad({ limit: 0 }, "limit", "'0'");
    await bad({ limit: 1000 }, "limit", "'1000'");
    await bad({ limit: "abc" }, "limit", "'abc'");
    await bad({ limit: "1.5" }, "limit");
    await bad({ offset: -1 }, "offset");
  });

  it("refuses bad dates and a window that ends before it starts", async () => {
    await bad({ conversionDateFrom: "2026-02-30", conversionDateTo: "2026-03-01" }, "conversionDateFrom");
    await bad({ conversionDateFrom: "yesterday", conversionDateTo: "2026-03-01" }, "conversionDateFrom", "yesterday");
    await bad({ conversionDateFrom: "2026-03-01", conversionDateTo: "03/05/2026" }, "conversionDateTo");
    await bad({ conversionDateFrom: "2026-03-02", conversionDateTo: "2026-03-01" }, "conversionDateTo");
    await bad(
      { conversionDateFrom: "2026-03-01T10:00:00Z", conversionDateTo: "2026-03-01T09:00:00Z" },
      "conversionDateTo",
    );
  });

  it("refuses an unknown parameter, a responseType other than json or table, a bad id filter", async () => {
    await bad({ foo: "1" }, "foo");
    await bad({ fields: "date", colour: "red" }, "colour");
    await bad({ responseType: "csv" }, "responseType", "csv");
    await bad({ brandId: "abc" }, "brandId");
    await bad({ accountId: 0 }, "accountId");
  });

  it("refuses a sortBy that is not a requested field or stat", async () => {
    await bad({ fields: "date", stats: "clicks", sortBy: "signups" }, "sortBy", "signups");
    await bad({ fields: "date", stats: "clicks", sortBy: "brand" }, "sortBy", "brand");
    await bad({ fields: "date", sortBy: "nonsense" }, "sortBy", "nonsense");
    // The same sorts are fine once requested.
    const ok = await get({ fields: "date,brand", stats: "clicks,signups", sortBy: "signups" });
    expect(ok.statusCode, ok.body).toBe(200);
    const byField = await get({ fields: "date,brand", stats: "clicks", sortBy: "-brand" });
    expect(byField.statusCode, byField.body).toBe(200);
  });

  it("needs a credential and the reports.read permission", async () => {
    expect((await get({}, null)).statusCode).toBe(401);
    expect((await get({}, "ApiKey nope")).statusCode).toBe(401);
    const reader = await seedTenancy(t, { permissions: ["catalog.read"] });
    const denied = await get({}, reader.bearer);
    expect(denied.statusCode, denied.body).toBe(403);
    expect(denied.json().code).toBe("forbidden");
    const allowed = await seedTenancy(t, { permissions: ["reports.read"] });
    expect((await get({}, allowed.bearer)).statusCode).toBe(200);
  });
});
