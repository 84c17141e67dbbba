import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { type CatalogFixture, seedCatalog } from "./helpers/catalog.js";
import {
  buildCatalog,
  daysOf,
  expectedMetrics,
  runWorkload,
  STAT_NAMES,
  type StatName,
  type Workload,
  ZERO_STATS,
} from "./helpers/workload.js";

const ACCOUNTS = "/api/v1/composites/accounts/metrics";
const LINKS = "/api/v1/composites/accounts/links/metrics";
const START = "2026-04-24T20:00:00.000Z";
const EARLY = "2026-03-20T20:00:00.000Z";
const SORTABLE = [
  "clicks",
  "signups",
  "firstTimeDeposit",
  "qualifiers",
  "cpaCommission",
  "revShareCommission",
  "commission",
  "flatFeeCommission",
] as const;

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
  w = await runWorkload(t, who, catalog, { seed: 77001, start: START, clicks: 480, earlyClicks: 30 });
  // The other tenant: 4 clicks on its one link.
  for (let i = 0; i < 4; i++) {
    // A browser's user agent: the inject default ("lightMyRequest") is an HTTP tool's, a bot's.
    const res = await t.call({
      method: "GET",
      url: `/go/${otherCat.linkId}/${otherCat.trafficSourceId}`,
      headers: {
        "user-agent":
          "Mozilla/5.0 (Windows NT 10.0; Win64; x64) AppleWebKit/537.36 (KHTML, like Gecko) Chrome/126.0.0.0 Safari/537.36",
      },
    });
    expect(res.statusCode).toBe(302);
  }
  await t.ctx.tracking.clicks.flush();
  const days = daysOf(w);
  firstDay = days[0] as string;
  lastDay = days[days.length - 1] as string;
}, 180_000);
afterAll(async () => t?.close());

type Query = Record<string, string | number>;
type Item = Record<string, unknown> & {
  id: number;
  name: string;
  metrics: Record<string, number>;
  comparisonMetrics?: Record<string, number>;
};
const qs = (query: Query) => new URLSearchParams(Object.entries(query).map(([k, v]) => [k, String(v)])).toString();

async function get(path: string, query: Query | string, auth: string | null = who.apiKey) {
  const search = typeof query === "string" ? query : qs(query);
  return t.call({
    method: "GET",
    url: `${path}${search ? `?${search}` : ""}`,
    headers: auth === null ? {} : { authorization: auth },
  });
}

async function page(path: string, query: Query | string, auth: string | null = who.apiKey) {
  const res = await get(path, query, auth);
  expect(res.statusCode, res.body).toBe(200);
  const body = res.json();
  expect(body.code).toBe("ok");
  return {
    items: body.data as Item[],
    pagination: body.pagination as { offset: number; limit: number; total: number },
  };
}

/** Walks every page with a small limit: no duplicate, no gap, total steady. */
async function walk(path: string, query: Query, limit = 3): Promise<Item[]> {
  const items: Item[] = [];
  let total = -1;
  for (let offset = 0; total < 0 || offset < total; offset += limit) {
    const { items: got, pagination } = await page(path, { ...query, offset, limit });
    expect(pagination.offset).toBe(offset);
    expect(pagination.limit).toBe(limit);
    if (total >= 0) expect(pagination.total).toBe(total);
    total = pagination.total;
    expect(got.length).toBe(Math.min(limit, Math.max(0, total - offset)));
    items.push(...got);
  }
  expect(new Set(items.map((i) => i.id)).size).toBe(items.length);
  expect(items.length).toBe(total);
  return items;
}

const metricsOf = (by: "accountId" | "linkId", from: string, to: string) => {
  const map = expectedMetrics(w, by, from, to);
  return (id: number) => map.get(id) ?? ZERO_STATS;
};

function expectOrdered(items: Item[], key: (i: Item) => number | string, direction: "asc" | "desc"): void {
  const keys = items.map(key);
  const sorted = [...keys].sort((a, b) => {
    const c = a < b ? -1 : a > b ? 1 : 0;
    return direction === "asc" ? c : -c;
  });
  expect(keys).toEqual(sorted);
}

describe("accounts with metrics", () => {
  it("lists every account, those without traffic with zero metrics, equal to the workload", async () => {
    const expected = metricsOf("accountId", firstDay, lastDay);
    const { items, pagination } = await page(ACCOUNTS, { metricsFrom: firstDay, metricsTo: lastDay, limit: 500 });
    expect(pagination).toEqual({ offset: 0, limit: 500, total: w.catalog.accounts.length });
    expect(items.map((i) => i.id).sort((a, b) => a - b)).toEqual(
      w.catalog.accounts.map((a) => a.id).sort((a, b) => a - b),
    );
    for (const item of items) {
      const account = w.catalog.accounts.find((a) => a.id === item.id);
      expect(item).toMatchObject({ name: account?.name, programId: account?.programId, status: account?.status });
      expect(item.metrics).toEqual(expected(item.id));
      expect(Object.keys(item.metrics).sort()).toEqual([...STAT_NAMES].sort());
      expect("comparisonMetrics" in item).toBe(false);
    }
    // Two accounts have no traffic at all; the rest have clicks.
    const quiet = items.filter((i) => i.metrics.clicks === 0).map((i) => i.name);
    expect(quiet.sort()).toEqual(["foxtrot", "hotel"]);
    expect(items.find((i) => i.name === "foxtrot")?.metrics).toEqual(ZERO_STATS);
  });

  it("the metrics window is inclusive whole UTC days; the default is the last 30 days", async () => {
    for (const [from, to] of [
      ["2026-04-27", "2026-04-27"],
      ["2026-04-25", "2026-04-29"],
      ["2026-03-01", "2026-03-31"],
    ] as const) {
      const expected = metricsOf("accountId", from, to);
      const { items } = await page(ACCOUNTS, { metricsFrom: from, metricsTo: to, limit: 500 });
      for (const item of items) expect(item.metrics, `${from}..${to} ${item.name}`).toEqual(expected(item.id));
      expect(items.some((i) => (i.metrics.clicks ?? 0) > 0)).toBe(true);
    }
    const today = t.clock.now().toISOString().slice(0, 10);
    const from = new Date(new Date(`${today}T00:00:00Z`).getTime() - 29 * 86_400_000).toISOString().slice(0, 10);
    const expected = metricsOf("accountId", from, today);
    const everything = metricsOf("accountId", firstDay, lastDay);
    const { items } = await page(ACCOUNTS, { limit: 500 });
    for (const item of items) expect(item.metrics).toEqual(expected(item.id));
    // The early traffic makes the default window differ from the whole period.
    expect(items.some((i) => i.metrics.clicks !== everything(i.id).clicks)).toBe(true);
  });

  it("a one-sided metrics window takes the default for the other end", async () => {
    const today = t.clock.now().toISOString().slice(0, 10);
    const day = (d: string, n: number) =>
      new Date(new Date(`${d}T00:00:00Z`).getTime() + n * 86_400_000).toISOString().slice(0, 10);
    const toOnly = metricsOf("accountId", day("2026-04-26", -29), "2026-04-26");
    const fromOnly = metricsOf("accountId", "2026-04-29", today);
    const a = await page(ACCOUNTS, { metricsTo: "2026-04-26", limit: 500 });
    for (const item of a.items) expect(item.metrics).toEqual(toOnly(item.id));
    const b = await page(ACCOUNTS, { metricsFrom: "2026-04-29", limit: 500 });
    for (const item of b.items) expect(item.metrics).toEqual(fromOnly(item.id));
    // Different windows, different figures: the checks above are not about zeros.
    expect(a.items.some((i) => (i.metrics.clicks ?? 0) > 0)).toBe(true);
    expect(b.items.some((i) => (i.metrics.clicks ?? 0) > 0)).toBe(true);
    const everything = metricsOf("accountId", firstDay, "2026-04-26");
    expect(a.items.some((i) => i.metrics.clicks !== everything(i.id).clicks)).toBe(true);
  });

  it("comparisonMetrics only when both comparison dates are given", async () => {
    const current = metricsOf("accountId", "2026-04-28", lastDay);
    const previous = metricsOf("accountId", "2026-04-24", "2026-04-27");
    const { items } = await page(ACCOUNTS, {
      metricsFrom: "2026-04-28",
      metricsTo: lastDay,
      comparisonFrom: "2026-04-24",
      // A date-time is exact (test/reports-datetime.test.ts): the last instant of the day is the whole day.
      comparisonTo: "2026-04-27T23:59:59.999Z",
      limit: 500,
    });
    expect(items).toHaveLength(w.catalog.accounts.length);
    for (const item of items) {
      expect(item.metrics).toEqual(current(item.id));
      expect(item.comparisonMetrics).toEqual(previous(item.id));
    }
    expect(items.some((i) => i.metrics.clicks !== i.comparisonMetrics?.clicks)).toBe(true);

    const onlyFrom = await get(ACCOUNTS, { comparisonFrom: "2026-04-24" });
    expect(onlyFrom.statusCode).toBe(400);
    expect(onlyFrom.json().message).toContain("comparisonTo");
    expect(onlyFrom.json().data.errors[0].path).toBe("comparisonTo");
    const onlyTo = await get(LINKS, { comparisonTo: "2026-04-24" });
    expect(onlyTo.statusCode).toBe(400);
    expect(onlyTo.json().message).toContain("comparisonFrom");
    expect(onlyTo.json().data.errors[0].path).toBe("comparisonFrom");
    const reversed = await get(ACCOUNTS, { comparisonFrom: "2026-04-25", comparisonTo: "2026-04-24" });
    expect(reversed.statusCode).toBe(400);
    expect(reversed.json().message).toContain("comparisonTo");
    const badDate = await get(ACCOUNTS, { metricsFrom: "2026-13-01", metricsTo: "2026-12-01" });
    expect(badDate.statusCode).toBe(400);
    expect(badDate.json().message).toContain("metricsFrom");
  });

  it("sorts by each metric over the whole set before paging, highest first", async () => {
    const window = { metricsFrom: firstDay, metricsTo: lastDay };
    for (const stat of SORTABLE) {
      const items = await walk(ACCOUNTS, { ...window, sortBy: stat });
      expect(items).toHaveLength(w.catalog.accounts.length);
      // The order is not an accident of the data: the values differ.
      expect(new Set(items.map((i) => i.metrics[stat])).size, stat).toBeGreaterThan(2);
      expectOrdered(items, (i) => i.metrics[stat] as number, "desc");
    }
    const ftd = await walk(ACCOUNTS, { ...window, sortBy: "ftd" });
    expectOrdered(ftd, (i) => i.metrics.firstTimeDeposit as number, "desc");
  });

  it("+ ascends (also when it arrives as a space), - descends; name ascends unless -name", async () => {
    const window = `metricsFrom=${firstDay}&metricsTo=${lastDay}&limit=500`;
    const byClicks = (items: Item[]) => items.map((i) => i.metrics.clicks as number);
    const desc = byClicks((await page(ACCOUNTS, `${window}&sortBy=clicks`)).items);
    expect(desc).toEqual([...desc].sort((a, b) => b - a));
    expect(byClicks((await page(ACCOUNTS, `${window}&sortBy=-clicks`)).items)).toEqual(desc);
    const asc = [...desc].sort((a, b) => a - b);
    expect(asc).not.toEqual(desc);
    for (const sortBy of ["%2Bclicks", "+clicks", "%20clicks"]) {
      expect(byClicks((await page(ACCOUNTS, `${window}&sortBy=${sortBy}`)).items), sortBy).toEqual(asc);
    }
    const ascending = await walk(ACCOUNTS, { metricsFrom: firstDay, metricsTo: lastDay, sortBy: "+commission" }, 2);
    expectOrdered(ascending, (i) => i.metrics.commission as number, "asc");

    const names = w.catalog.accounts.map((a) => a.name.toLowerCase()).sort();
    const lower = (items: Item[]) => items.map((i) => i.name.toLowerCase());
    expect(lower(await walk(ACCOUNTS, { sortBy: "name" }))).toEqual(names);
    expect(lower(await walk(ACCOUNTS, { sortBy: "-name" }))).toEqual([...names].reverse());
    expect(lower((await page(ACCOUNTS, "sortBy=+name")).items)).toEqual(names);
    // The default order is by name too.
    expect(lower((await page(ACCOUNTS, {})).items)).toEqual(names);
  });

  it("refuses an unknown sort column, naming it", async () => {
    for (const sortBy of ["foo", "uniqueClicks", "depositAmount", "+bar", "-epc"]) {
      const res = await get(ACCOUNTS, { sortBy });
      expect(res.statusCode, sortBy).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().data.errors[0].path).toBe("sortBy");
      expect(res.json().message).toContain(`'${sortBy.replace(/^[+-]/, "")}'`);
    }
    const links = await get(LINKS, { sortBy: "foo" });
    expect(links.statusCode).toBe(400);
    expect(links.json().message).toContain("'foo'");
  });

  it("filters by search, program, brand and status; the total counts the filtered set", async () => {
    const c = w.catalog;
    const programOf = (id: number) => c.programs.find((p) => p.id === id);
    const cases: [Query, (a: (typeof c.accounts)[number]) => boolean][] = [
      [{ search: "A" }, (a) => a.name.toLowerCase().includes("a")],
      [{ search: "ha" }, (a) => a.name.toLowerCase().includes("ha")],
      [{ search: "_" }, () => false],
      [{ search: "%" }, () => false],
      [{ programId: c.programs[0]?.id as number }, (a) => a.programId === c.programs[0]?.id],
      [
        { brandId: c.brands[1]?.id as number },
        (a) => !!programOf(a.programId)?.brandIds.includes(c.brands[1]?.id as number),
      ],
      [
        { brandId: c.brands[0]?.id as number },
        (a) => !!programOf(a.programId)?.brandIds.includes(c.brands[0]?.id as number),
      ],
      [{ status: "inactive" }, (a) => a.status === "inactive"],
      [{ status: "active" }, (a) => a.status === "active"],
      [
        { status: "active", programId: c.programs[1]?.id as number, search: "e" },
        (a) => a.status === "active" && a.programId === c.programs[1]?.id && a.name.toLowerCase().includes("e"),
      ],
    ];
    const expected = metricsOf("accountId", firstDay, lastDay);
    for (const [filter, keep] of cases) {
      const want = c.accounts.filter(keep);
      const items = await walk(
        ACCOUNTS,
        { ...filter, metricsFrom: firstDay, metricsTo: lastDay, sortBy: "-clicks" },
        2,
      );
      expect(
        items.map((i) => i.id).sort((a, b) => a - b),
        JSON.stringify(filter),
      ).toEqual(want.map((a) => a.id).sort((a, b) => a - b));
      for (const item of items) expect(item.metrics).toEqual(expected(item.id));
      expectOrdered(items, (i) => i.metrics.clicks as number, "desc");
      // A page past the end still counts the filtered set.
      const past = await page(ACCOUNTS, {
        ...filter,
        offset: 100,
        limit: 5,
        comparisonFrom: firstDay,
        comparisonTo: lastDay,
      });
      expect(past.items).toEqual([]);
      expect(past.pagination.total).toBe(want.length);
    }
    // The cases are not all trivially the whole set or nothing.
    expect(c.accounts.filter((a) => a.status === "inactive").length).toBe(2);
    const bad = await get(ACCOUNTS, { status: "sleeping" });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("status");
  });

  it("limit and offset are checked", async () => {
    for (const [query, path] of [
      [{ limit: 0 }, "limit"],
      [{ limit: 501 }, "limit"],
      [{ limit: "abc" }, "limit"],
      [{ offset: -1 }, "offset"],
      [{ programId: "x" }, "programId"],
      [{ nope: 1 }, "nope"],
    ] as [Query, string][]) {
      const res = await get(ACCOUNTS, query);
      expect(res.statusCode, JSON.stringify(query)).toBe(400);
      expect(res.json().message).toContain(path);
    }
    const { items, pagination } = await page(ACCOUNTS, {});
    expect(pagination).toEqual({ offset: 0, limit: 50, total: w.catalog.accounts.length });
    expect(items).toHaveLength(w.catalog.accounts.length);
  });
});

describe("links with metrics", () => {
  it("lists every link, those without traffic with zeros, equal to the workload, with comparison", async () => {
    const current = metricsOf("linkId", "2026-04-29", lastDay);
    const previous = metricsOf("linkId", firstDay, "2026-04-28");
    const { items, pagination } = await page(LINKS, {
      metricsFrom: "2026-04-29",
      metricsTo: lastDay,
      comparisonFrom: firstDay,
      comparisonTo: "2026-04-28",
      limit: 500,
    });
    expect(pagination.total).toBe(w.catalog.links.length);
    expect(items.map((i) => i.id).sort((a, b) => a - b)).toEqual(
      w.catalog.links.map((l) => l.id).sort((a, b) => a - b),
    );
    for (const item of items) {
      const link = w.catalog.links.find((l) => l.id === item.id);
      expect(item).toMatchObject({ name: link?.name, accountId: link?.accountId, brandId: link?.brandId });
      expect(item.metrics, item.name).toEqual(current(item.id));
      expect(item.comparisonMetrics, item.name).toEqual(previous(item.id));
    }
    for (const name of ["Hazel", "Jade"]) {
      const item = items.find((i) => i.name === name);
      expect(item?.metrics).toEqual(ZERO_STATS);
      expect(item?.comparisonMetrics).toEqual(ZERO_STATS);
    }
    const plain = await page(LINKS, { metricsFrom: firstDay, metricsTo: lastDay });
    expect(plain.items.every((i) => !("comparisonMetrics" in i))).toBe(true);
  });

  it("sorts the whole set before paging", async () => {
    const window = { metricsFrom: firstDay, metricsTo: lastDay };
    for (const sortBy of [...SORTABLE, "ftd"]) {
      const stat = (sortBy === "ftd" ? "firstTimeDeposit" : sortBy) as StatName;
      const items = await walk(LINKS, { ...window, sortBy }, 3);
      expect(items).toHaveLength(w.catalog.links.length);
      expect(new Set(items.map((i) => i.metrics[stat])).size, sortBy).toBeGreaterThan(2);
      expectOrdered(items, (i) => i.metrics[stat] as number, "desc");
    }
    expectOrdered(await walk(LINKS, { ...window, sortBy: "+clicks" }, 4), (i) => i.metrics.clicks as number, "asc");
    const names = w.catalog.links.map((l) => l.name.toLowerCase()).sort();
    expect((await walk(LINKS, { sortBy: "-name" })).map((i) => i.name.toLowerCase())).toEqual([...names].reverse());
    expect((await walk(LINKS, { sortBy: "name" })).map((i) => i.name.toLowerCase())).toEqual(names);
  });

  it("filters by account, brand, program, status and search", async () => {
    const c = w.catalog;
    const accountOf = (id: number) => c.accounts.find((a) => a.id === id);
    const cases: [Query, (l: (typeof c.links)[number]) => boolean][] = [
      [{ accountId: c.accounts[0]?.id as number }, (l) => l.accountId === c.accounts[0]?.id],
      [{ accountId: c.accounts[2]?.id as number }, (l) => l.accountId === c.accounts[2]?.id],
      [{ brandId: c.brands[2]?.id as number }, (l) => l.brandId === c.brands[2]?.id],
      [{ programId: c.programs[1]?.id as number }, (l) => accountOf(l.accountId)?.programId === c.programs[1]?.id],
      [{ status: "inactive" }, (l) => accountOf(l.accountId)?.status === "inactive"],
      [{ search: "e" }, (l) => l.name.toLowerCase().includes("e")],
      [
        { brandId: c.brands[2]?.id as number, status: "active", search: "o" },
        (l) =>
          l.brandId === c.brands[2]?.id &&
          accountOf(l.accountId)?.status === "active" &&
          l.name.toLowerCase().includes("o"),
      ],
    ];
    const expected = metricsOf("linkId", firstDay, lastDay);
    for (const [filter, keep] of cases) {
      const want = c.links.filter(keep);
      expect(want.length, JSON.stringify(filter)).toBeGreaterThan(0);
      expect(want.length).toBeLessThan(c.links.length);
      const items = await walk(
        LINKS,
        { ...filter, metricsFrom: firstDay, metricsTo: lastDay, sortBy: "commission" },
        2,
      );
      expect(
        items.map((i) => i.id).sort((a, b) => a - b),
        JSON.stringify(filter),
      ).toEqual(want.map((l) => l.id).sort((a, b) => a - b));
      for (const item of items) expect(item.metrics).toEqual(expected(item.id));
      expectOrdered(items, (i) => i.metrics.commission as number, "desc");
    }
    // accountId is a links filter only.
    const res = await get(ACCOUNTS, { accountId: c.accounts[0]?.id as number });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toContain("accountId");
  });
});

describe("composites: tenants and permissions", () => {
  it("another tenant sees only its own accounts, links and traffic", async () => {
    const window = { metricsFrom: firstDay, metricsTo: lastDay };
    const accounts = await page(ACCOUNTS, window, other.apiKey);
    expect(accounts.items.map((i) => i.id)).toEqual([otherCat.accountId]);
    expect(accounts.items[0]?.metrics).toEqual({ ...ZERO_STATS, clicks: 4, uniqueClicks: 1 });
    const links = await page(LINKS, window, other.apiKey);
    expect(links.items.map((i) => i.id)).toEqual([otherCat.linkId]);
    expect(links.pagination.total).toBe(1);
    // Our ids as filters find nothing there, and theirs nothing here.
    const ours = await page(LINKS, { accountId: w.catalog.accounts[0]?.id as number }, other.apiKey);
    expect(ours.pagination.total).toBe(0);
    const theirs = await page(ACCOUNTS, { programId: otherCat.programId });
    expect(theirs.items).toEqual([]);
    expect(theirs.pagination.total).toBe(0);
    const mine = await page(ACCOUNTS, { ...window, limit: 500 });
    expect(mine.items.some((i) => i.id === otherCat.accountId)).toBe(false);
  });

  it("needs a credential and reports.read", async () => {
    for (const path of [ACCOUNTS, LINKS]) {
      expect((await get(path, {}, null)).statusCode).toBe(401);
    }
    const reader = await seedTenancy(t, { permissions: ["catalog.read"] });
    for (const path of [ACCOUNTS, LINKS]) {
      const res = await get(path, {}, reader.bearer);
      expect(res.statusCode, res.body).toBe(403);
      expect(res.json().code).toBe("forbidden");
    }
    const allowed = await seedTenancy(t, { permissions: ["reports.read"] });
    const res = await get(ACCOUNTS, {}, allowed.bearer);
    expect(res.statusCode).toBe(200);
    expect(res.json().data).toEqual([]);
  });
});

describe("GET /api/v1/accounts filters", () => {
  it("filter by program, brand, status and search", async () => {
    const c = w.catalog;
    const programOf = (id: number) => c.programs.find((p) => p.id === id);
    const cases: [Query, (a: (typeof c.accounts)[number]) => boolean][] = [
      [{}, () => true],
      [{ programId: c.programs[1]?.id as number }, (a) => a.programId === c.programs[1]?.id],
      [
        { brandId: c.brands[2]?.id as number },
        (a) => !!programOf(a.programId)?.brandIds.includes(c.brands[2]?.id as number),
      ],
      [{ status: "inactive" }, (a) => a.status === "inactive"],
      [{ search: "ECH" }, (a) => a.name.toLowerCase().includes("ech")],
      [
        { programId: c.programs[0]?.id as number, status: "active" },
        (a) => a.programId === c.programs[0]?.id && a.status === "active",
      ],
    ];
    for (const [filter, keep] of cases) {
      const res = await t.call({
        method: "GET",
        url: `/api/v1/accounts?${qs({ ...filter, limit: 500 })}`,
        headers: { authorization: who.apiKey },
      });
      expect(res.statusCode, res.body).toBe(200);
      const want = c.accounts.filter(keep).map((a) => a.id);
      const got = (res.json().data as { id: number }[]).map((a) => a.id);
      expect(
        got.sort((a, b) => a - b),
        JSON.stringify(filter),
      ).toEqual(want.sort((a, b) => a - b));
      expect(res.json().pagination?.total).toBe(want.length);
    }
    const bad = await t.call({
      method: "GET",
      url: "/api/v1/accounts?status=sleeping",
      headers: { authorization: who.apiKey },
    });
    expect(bad.statusCode).toBe(400);
  });
});
