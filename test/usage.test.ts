import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { usageTimeseries } from "../src/features/usage/service.js";
import { DAY_MS, HOUR_MS } from "../src/platform/durations.js";
import { ADMIN_KEY, createKeyViaApi, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { openTestDb } from "./helpers/db.js";

const USAGE = "/api/v1/traffic-controls/api-usage";
const WINDOW_MS = 72 * HOUR_MS;

interface UsageRow {
  tenant_id: string;
  token_id: string;
  method: string;
  route: string;
  status: number;
  ip: string;
  at: Date;
}

interface Bucket {
  start: string;
  calls: number;
}

interface BreakdownRow {
  key: string;
  label: string;
  calls: number;
}

/** One GET; `as` is an `Authorization` header value, `ip` the client's address. */
function get(t: TestApp, url: string, as?: string, ip?: string) {
  return t.call({
    method: "GET",
    url,
    ...(as === undefined ? {} : { headers: { authorization: as } }),
    ...(ip === undefined ? {} : { remoteAddress: ip }),
  });
}

async function usageRows(t: TestApp, tenantId: string): Promise<UsageRow[]> {
  return t.ctx.db.query<UsageRow>(
    // One row per call: the table counts calls per minute and call shape.
    `select tenant_id, token_id, method, route, status, ip, at from api_usage, generate_series(1, calls)
      where tenant_id = $1 order by at, route`,
    [tenantId],
  );
}

async function stats(t: TestApp, as: string, query = "") {
  const res = await get(t, `${USAGE}/stats${query}`, as);
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

async function timeseries(t: TestApp, as: string, query = ""): Promise<{ interval: string; buckets: Bucket[] }> {
  const res = await get(t, `${USAGE}/timeseries${query}`, as);
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

async function breakdown(t: TestApp, as: string, query: string): Promise<BreakdownRow[]> {
  const res = await get(t, `${USAGE}/breakdown${query}`, as);
  expect(res.statusCode).toBe(200);
  return res.json().data;
}

/** A fresh bearer for the tenancy's person, valid at the app's current clock (a JWT lives 12 hours). */
async function signIn(t: TestApp, who: Tenancy): Promise<string> {
  const res = await t.call({
    method: "POST",
    url: "/api/v1/auth",
    payload: { email: who.email, password: who.password },
  });
  expect(res.statusCode).toBe(200);
  return `Bearer ${res.json().data.token}`;
}

const floorTo = (ms: number, unit: number) => Math.floor(ms / unit) * unit;

function expectContinuous(buckets: Bucket[], stepMs: number): void {
  for (let i = 1; i < buckets.length; i++) {
    const previous = buckets[i - 1];
    const current = buckets[i];
    expect(previous).toBeDefined();
    expect(current).toBeDefined();
    if (!previous || !current) return;
    expect(Date.parse(current.start) - Date.parse(previous.start)).toBe(stepMs);
  }
}

function callsIn(buckets: Bucket[], start: number): number | undefined {
  return buckets.find((b) => Date.parse(b.start) === start)?.calls;
}

describe("usage metering and figures", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 10_000, anonymousMax: 10_000 } } });
  });
  afterAll(() => t.close());

  it("meters every call made with a key (route template, method, status, key, IP, time) and counts it exactly", async () => {
    const who = await seedTenancy(t);
    const at = t.clock.now();
    const calls: [string, string, number][] = [
      ["/api/v1/users", "10.1.0.1", 200],
      ["/api/v1/api-tokens", "10.1.0.1", 200],
      ["/api/v1/users/usr_nosuchperson1", "10.1.0.1", 404],
      ["/api/v1/users/usr_nosuchperson2", "10.1.0.2", 404],
      ["/api/v1/me", "10.1.0.2", 403],
      ["/api/v1/audit-log?limit=0", "10.1.0.3", 400],
    ];
    for (const [url, ip, status] of calls) {
      expect((await get(t, url, who.apiKey, ip)).statusCode).toBe(status);
    }
    await t.ctx.usage.flush();

    const rows = await usageRows(t, who.tenantId);
    expect(rows).toHaveLength(calls.length);
    expect(rows).toContainEqual({
      tenant_id: who.tenantId,
      token_id: who.apiKeyId,
      method: "GET",
      route: "/api/v1/users/:id",
      status: 404,
      ip: "10.1.0.2",
      at: new Date(floorTo(at.getTime(), 60_000)),
    });
    expect(rows).toContainEqual(
      expect.objectContaining({ route: "/api/v1/me", status: 403, ip: "10.1.0.2", token_id: who.apiKeyId }),
    );
    expect(rows).toContainEqual(expect.objectContaining({ route: "/api/v1/audit-log", status: 400, ip: "10.1.0.3" }));

    const expected = {
      from: new Date(at.getTime() - WINDOW_MS).toISOString(),
      to: at.toISOString(),
      totalCalls: 6,
      rateLimited: 0,
      uniqueIps: 3,
      byStatusClass: { "2xx": 2, "3xx": 0, "4xx": 4, "5xx": 0 },
      clicksNotRecorded: 0,
    };
    expect(await stats(t, who.bearer)).toEqual(expected);
    // The key may read its own figures too (the read is answered before it is metered itself).
    expect(await stats(t, who.apiKey)).toEqual(expected);
  });

  it("does not meter calls made with a bearer JWT, nor calls whose key is refused", async () => {
    const who = await seedTenancy(t);
    expect((await get(t, "/api/v1/users", who.bearer)).statusCode).toBe(200);
    expect((await get(t, "/api/v1/me", who.bearer)).statusCode).toBe(200);
    expect((await get(t, "/api/v1/users/usr_nosuchperson", who.bearer)).statusCode).toBe(404);
    expect((await get(t, "/api/v1/users", "ApiKey not-a-real-key")).statusCode).toBe(401);
    await t.ctx.usage.flush();

    expect(await usageRows(t, who.tenantId)).toEqual([]);
    expect(await stats(t, who.bearer)).toMatchObject({ totalCalls: 0, uniqueIps: 0, rateLimited: 0 });
  });

  it("never shows another tenant's calls", async () => {
    const mine = await seedTenancy(t);
    const theirs = await seedTenancy(t);
    for (let i = 0; i < 3; i++) await get(t, "/api/v1/users", theirs.apiKey, "10.2.0.1");
    await get(t, "/api/v1/users", mine.apiKey, "10.2.0.2");
    await t.ctx.usage.flush();

    expect(await stats(t, mine.bearer)).toMatchObject({ totalCalls: 1, uniqueIps: 1 });
    expect(await stats(t, theirs.bearer)).toMatchObject({ totalCalls: 3, uniqueIps: 1 });
    expect(await breakdown(t, mine.bearer, "?groupBy=apiKey")).toEqual([
      { key: mine.apiKeyId, label: expect.any(String), calls: 1 },
    ]);
    // Naming another tenant's key narrows to nothing rather than revealing its figures.
    expect(await stats(t, mine.bearer, `?apiTokenId=${theirs.apiKeyId}`)).toMatchObject({ totalCalls: 0 });
    const series = await timeseries(t, mine.bearer, `?apiTokenId=${theirs.apiKeyId}`);
    expect(series.buckets.every((b) => b.calls === 0)).toBe(true);
  });

  it("buffers usage rows instead of inserting one per request; flush writes them", async () => {
    const who = await seedTenancy(t);
    // Anything buffered earlier is written first, so only this test's calls can be pending.
    await t.ctx.usage.flush();
    expect((await get(t, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
    expect((await get(t, "/api/v1/api-tokens", who.apiKey)).statusCode).toBe(200);

    expect(await usageRows(t, who.tenantId)).toEqual([]);
    await t.ctx.usage.flush();
    expect(await usageRows(t, who.tenantId)).toHaveLength(2);
  });

  it("buckets calls by hour over the whole window, every hour present", async () => {
    const who = await seedTenancy(t);
    const first = t.clock.now().getTime();
    for (let i = 0; i < 2; i++) await get(t, "/api/v1/users", who.apiKey);
    t.clock.advance(5 * HOUR_MS);
    const second = t.clock.now().getTime();
    for (let i = 0; i < 3; i++) await get(t, "/api/v1/users", who.apiKey);
    await t.ctx.usage.flush();
    const bearer = await signIn(t, who);

    const hourly = await timeseries(t, bearer, "?interval=hour");
    expect(hourly.interval).toBe("hour");
    // From the hour holding now-72h to the hour holding now, both included.
    expect(hourly.buckets).toHaveLength(73);
    expect(hourly.buckets[0]?.start).toBe(new Date(floorTo(second - WINDOW_MS, HOUR_MS)).toISOString());
    expect(hourly.buckets.at(-1)?.start).toBe(new Date(floorTo(second, HOUR_MS)).toISOString());
    expectContinuous(hourly.buckets, HOUR_MS);
    expect(callsIn(hourly.buckets, floorTo(first, HOUR_MS))).toBe(2);
    expect(callsIn(hourly.buckets, floorTo(second, HOUR_MS))).toBe(3);
    expect(hourly.buckets.reduce((sum, b) => sum + b.calls, 0)).toBe(5);

    // Hourly is the default.
    expect(await timeseries(t, bearer)).toEqual(hourly);
  });

  it("buckets calls by UTC day over the whole window", async () => {
    const who = await seedTenancy(t);
    const first = t.clock.now().getTime();
    await get(t, "/api/v1/users", who.apiKey);
    t.clock.advance(DAY_MS);
    const second = t.clock.now().getTime();
    for (let i = 0; i < 2; i++) await get(t, "/api/v1/users", who.apiKey);
    await t.ctx.usage.flush();
    const bearer = await signIn(t, who);

    const daily = await timeseries(t, bearer, "?interval=day");
    expect(daily.interval).toBe("day");
    // now-72h is exactly three days back, so its day and today's are four buckets.
    expect(daily.buckets).toHaveLength(4);
    expect(daily.buckets[0]?.start).toBe(new Date(floorTo(second - WINDOW_MS, DAY_MS)).toISOString());
    expect(daily.buckets.at(-1)?.start).toBe(new Date(floorTo(second, DAY_MS)).toISOString());
    expect(daily.buckets.every((b) => b.start.endsWith("T00:00:00.000Z"))).toBe(true);
    expectContinuous(daily.buckets, DAY_MS);
    expect(callsIn(daily.buckets, floorTo(first, DAY_MS))).toBe(1);
    expect(callsIn(daily.buckets, floorTo(second, DAY_MS))).toBe(2);
  });

  it("refuses an unknown interval or groupBy with a 400 naming the parameter", async () => {
    const who = await seedTenancy(t);
    const interval = await get(t, `${USAGE}/timeseries?interval=week`, who.bearer);
    expect(interval.statusCode).toBe(400);
    expect(interval.json().code).toBe("validation_error");
    expect(interval.json().message).toMatch(/^interval /);
    expect(interval.json().data.errors[0].path).toBe("interval");

    const groupBy = await get(t, `${USAGE}/breakdown?groupBy=ip`, who.bearer);
    expect(groupBy.statusCode).toBe(400);
    expect(groupBy.json().message).toMatch(/^groupBy /);
  });

  it("breaks calls down by endpoint (method and route template), busiest first", async () => {
    const who = await seedTenancy(t);
    for (const id of ["usr_a1", "usr_a2", "usr_a3"]) await get(t, `/api/v1/users/${id}`, who.apiKey);
    for (let i = 0; i < 2; i++) await get(t, "/api/v1/api-tokens", who.apiKey);
    await get(t, "/api/v1/me", who.apiKey);
    await t.ctx.usage.flush();

    const rows = await breakdown(t, who.bearer, "?groupBy=endpoint");
    expect(rows).toEqual([
      { key: "GET /api/v1/users/:id", label: "GET /api/v1/users/:id", calls: 3 },
      { key: "GET /api/v1/api-tokens", label: "GET /api/v1/api-tokens", calls: 2 },
      { key: "GET /api/v1/me", label: "GET /api/v1/me", calls: 1 },
    ]);
    // By endpoint is the default.
    expect(await breakdown(t, who.bearer, "")).toEqual(rows);
  });

  it("breaks calls down by key, labelled with the key's name, '(deleted key)' once it is gone", async () => {
    const who = await seedTenancy(t);
    const second = await createKeyViaApi(t, who, "Breakdown second key");
    for (let i = 0; i < 3; i++) await get(t, "/api/v1/users", who.apiKey);
    await get(t, "/api/v1/users", second.apiKey);
    await t.ctx.usage.flush();
    const [firstKey] = await t.ctx.db.query<{ name: string }>("select name from api_tokens where id = $1", [
      who.apiKeyId,
    ]);

    expect(await breakdown(t, who.bearer, "?groupBy=apiKey")).toEqual([
      { key: who.apiKeyId, label: firstKey?.name, calls: 3 },
      { key: second.id, label: "Breakdown second key", calls: 1 },
    ]);

    const deleted = await t.call({
      method: "DELETE",
      url: `/api/v1/api-tokens/${second.id}`,
      headers: { authorization: who.bearer },
    });
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data).toEqual({ id: second.id, deleted: true });

    expect(await breakdown(t, who.bearer, "?groupBy=apiKey")).toEqual([
      { key: who.apiKeyId, label: firstKey?.name, calls: 3 },
      { key: second.id, label: "(deleted key)", calls: 1 },
    ]);
    expect(await stats(t, who.bearer)).toMatchObject({ totalCalls: 4 });
  });

  it("narrows stats, timeseries and breakdown to one key with apiTokenId", async () => {
    const who = await seedTenancy(t);
    const second = await createKeyViaApi(t, who, "Narrowed key");
    for (let i = 0; i < 4; i++) await get(t, "/api/v1/users", who.apiKey, "10.3.0.1");
    await get(t, "/api/v1/users/usr_nobody", second.apiKey, "10.3.0.2");
    await get(t, "/api/v1/api-tokens", second.apiKey, "10.3.0.3");
    await t.ctx.usage.flush();
    const only = `apiTokenId=${second.id}`;

    expect(await stats(t, who.bearer)).toMatchObject({ totalCalls: 6, uniqueIps: 3 });
    expect(await stats(t, who.bearer, `?${only}`)).toMatchObject({
      totalCalls: 2,
      uniqueIps: 2,
      byStatusClass: { "2xx": 1, "3xx": 0, "4xx": 1, "5xx": 0 },
    });
    const series = await timeseries(t, who.bearer, `?interval=hour&${only}`);
    expect(series.buckets.reduce((sum, b) => sum + b.calls, 0)).toBe(2);
    expect(await breakdown(t, who.bearer, `?groupBy=endpoint&${only}`)).toEqual([
      { key: "GET /api/v1/api-tokens", label: "GET /api/v1/api-tokens", calls: 1 },
      { key: "GET /api/v1/users/:id", label: "GET /api/v1/users/:id", calls: 1 },
    ]);
    expect(await breakdown(t, who.bearer, `?groupBy=apiKey&${only}`)).toEqual([
      { key: second.id, label: "Narrowed key", calls: 2 },
    ]);
  });

  it("needs usage.read: 403 without it, 401 without a credential", async () => {
    const reader = await seedTenancy(t, { permissions: ["reports.read"] });
    for (const path of ["stats", "timeseries", "breakdown"]) {
      const forbidden = await get(t, `${USAGE}/${path}`, reader.bearer);
      expect(forbidden.statusCode).toBe(403);
      expect(forbidden.json()).toMatchObject({ code: "forbidden", message: "Missing permission 'usage.read'" });
      const anonymous = await get(t, `${USAGE}/${path}`);
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().code).toBe("unauthorized");
    }
    const viewer = await seedTenancy(t, { permissions: ["usage.read"] });
    expect((await get(t, `${USAGE}/stats`, viewer.bearer)).statusCode).toBe(200);
  });
});

describe("the rolling 72-hour window", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 10_000, anonymousMax: 10_000 } } });
  });
  afterAll(() => t.close());

  async function countAll(): Promise<number> {
    const [row] = await t.ctx.db.query<{ n: number }>("select coalesce(sum(calls), 0)::int as n from api_usage");
    return row?.n ?? 0;
  }

  it("counts only the last 72 hours and the purge job deletes what is older", async () => {
    const who = await seedTenancy(t);
    const start = t.clock.now().getTime();
    for (let i = 0; i < 3; i++) await get(t, "/api/v1/users", who.apiKey, "10.4.0.1");
    t.clock.advance(2 * HOUR_MS);
    for (let i = 0; i < 2; i++) await get(t, "/api/v1/users", who.apiKey, "10.4.0.2");
    await t.ctx.usage.flush();
    expect(await stats(t, who.bearer)).toMatchObject({ totalCalls: 5, uniqueIps: 2 });

    t.clock.set(new Date(start + 73 * HOUR_MS));
    const bearer = await signIn(t, who);
    expect(await stats(t, bearer)).toMatchObject({ totalCalls: 2, uniqueIps: 1 });
    const hourly = await timeseries(t, bearer, "?interval=hour");
    expect(hourly.buckets.reduce((sum, b) => sum + b.calls, 0)).toBe(2);
    expect(await breakdown(t, bearer, "?groupBy=endpoint")).toEqual([
      { key: "GET /api/v1/users", label: "GET /api/v1/users", calls: 2 },
    ]);
    // Still stored until the purge runs.
    expect(await usageRows(t, who.tenantId)).toHaveLength(5);

    const purge = await t.call({
      method: "POST",
      url: "/api/admin/jobs/api-usage-purge/run",
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { now: t.clock.now().toISOString() },
    });
    expect(purge.statusCode).toBe(200);
    expect(purge.json().data).toMatchObject({ job: "api-usage-purge", ran: true, summary: { deleted: 3 } });
    const left = await usageRows(t, who.tenantId);
    expect(left).toHaveLength(2);
    expect(left.every((r) => r.ip === "10.4.0.2")).toBe(true);
    expect(await stats(t, bearer)).toMatchObject({ totalCalls: 2 });
  });

  it("draws the edge at 72 hours by the minute a row holds, the same for the figures and the purge", async () => {
    const who = await seedTenancy(t);
    // Rows are stamped with the start of their minute; the window starts 45 s into one.
    const now = Math.floor(t.clock.now().getTime() / 60_000) * 60_000 + 45_000;
    t.clock.set(new Date(now));
    const edgeMinute = Math.floor((now - WINDOW_MS) / 60_000) * 60_000;
    const insert = (at: number, ip: string) =>
      t.ctx.db.query(
        `insert into api_usage (tenant_id, token_id, method, route, status, ip, at)
         values ($1, $2, 'GET', '/api/v1/users', 200, $3, $4)`,
        [who.tenantId, who.apiKeyId, ip, new Date(at)],
      );
    await insert(now - 100 * HOUR_MS, "10.5.0.1");
    // The whole minute before the window's first: out.
    await insert(edgeMinute - 60_000, "10.5.0.2");
    // The window's first minute, partly inside it: in (its calls may be the last 15 s of it).
    await insert(edgeMinute, "10.5.0.3");
    await insert(Math.floor(now / 60_000) * 60_000, "10.5.0.4");

    expect(await stats(t, who.bearer)).toMatchObject({ totalCalls: 2, uniqueIps: 2 });
    const before = await countAll();
    const purge = await t.call({
      method: "POST",
      url: "/api/admin/jobs/api-usage-purge/run",
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { now: new Date(now).toISOString() },
    });
    expect(purge.json().data.summary).toEqual({ deleted: 2 });
    expect(await countAll()).toBe(before - 2);
    expect((await usageRows(t, who.tenantId)).map((r) => r.ip).sort()).toEqual(["10.5.0.3", "10.5.0.4"]);
  });

  it("counts a call still 10 s inside the window though its minute began before the window", async () => {
    const who = await seedTenancy(t);
    const at = Math.floor(t.clock.now().getTime() / 60_000) * 60_000 + 45_000;
    t.clock.set(new Date(at));
    expect((await get(t, "/api/v1/users", who.apiKey, "10.6.0.1")).statusCode).toBe(200);
    await t.ctx.usage.flush();
    t.clock.set(new Date(at + WINDOW_MS - 10_000));
    const bearer = await signIn(t, who);
    expect(await stats(t, bearer)).toMatchObject({ totalCalls: 1 });
    const hourly = await timeseries(t, bearer, "?interval=hour");
    expect(hourly.buckets.reduce((sum, b) => sum + b.calls, 0)).toBe(1);
  });
});

describe("shutdown", () => {
  it("writes the buffered usage rows when the app closes", async () => {
    const testDb = await openTestDb();
    try {
      const t = await startTestApp({ testDb });
      const who = await seedTenancy(t);
      for (let i = 0; i < 3; i++) expect((await get(t, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
      await t.close();

      const [row] = await testDb.db.query<{ n: number }>(
        "select coalesce(sum(calls), 0)::int as n from api_usage where tenant_id = $1",
        [who.tenantId],
      );
      expect(row?.n).toBe(3);
    } finally {
      await testDb.dispose();
    }
  });
});

describe("day buckets on a database whose session time zone is not UTC", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  it("keeps UTC midnights across a daylight-saving change and counts every day", async () => {
    const who = await seedTenancy(t);
    // Europe/Berlin moves its clocks forward on 2026-03-29: that local day lasts 23 hours.
    const now = new Date("2026-03-30T12:00:00.000Z");
    for (const at of ["2026-03-28T10:00:00Z", "2026-03-29T10:00:00Z", "2026-03-30T10:00:00Z"]) {
      await t.ctx.db.query(
        `insert into api_usage (tenant_id, token_id, method, route, status, ip, at)
         values ($1, $2, 'GET', '/api/v1/users', 200, '10.6.0.1', $3)`,
        [who.tenantId, who.apiKeyId, new Date(at)],
      );
    }
    const daily = await t.ctx.db.transaction(async (tx) => {
      await tx.query("set local timezone to 'Europe/Berlin'");
      return usageTimeseries(tx, { tenantId: who.tenantId, now }, "day", "UTC");
    });
    expect(daily.buckets).toEqual([
      { start: "2026-03-27T00:00:00.000Z", calls: 0 },
      { start: "2026-03-28T00:00:00.000Z", calls: 1 },
      { start: "2026-03-29T00:00:00.000Z", calls: 1 },
      { start: "2026-03-30T00:00:00.000Z", calls: 1 },
    ]);
    // In Berlin's own days, through the API: the day of the change starts at 23:00Z, the next at 22:00Z.
    t.clock.set(now.toISOString());
    const res = await t.call({
      method: "GET",
      url: "/api/v1/traffic-controls/api-usage/timeseries?interval=day&timeZone=europe/berlin",
      headers: { authorization: who.apiKey },
    });
    expect(res.statusCode, res.body).toBe(200);
    expect(res.json().data.timeZone).toBe("Europe/Berlin");
    const buckets: { start: string; calls: number }[] = res.json().data.buckets;
    expect(buckets.map((b) => b.start)).toEqual([
      "2026-03-26T23:00:00.000Z",
      "2026-03-27T23:00:00.000Z",
      "2026-03-28T23:00:00.000Z",
      "2026-03-29T22:00:00.000Z",
    ]);
    // The last day also counts the calls this test made through the API.
    expect(buckets.map((b) => b.calls).slice(0, 3)).toEqual([0, 1, 1]);
    expect(buckets[3]?.calls).toBeGreaterThanOrEqual(1);
    const bad = await t.call({
      method: "GET",
      url: "/api/v1/traffic-controls/api-usage/timeseries?timeZone=Mars/Olympus",
      headers: { authorization: who.apiKey },
    });
    expect(bad.statusCode).toBe(400);
    expect(bad.json().message).toContain("timeZone");
  });
});
