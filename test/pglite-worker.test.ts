import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import type { Db } from "../src/platform/db/types.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { openTestDb, type TestDb } from "./helpers/db.js";

// The embedded database runs on a thread of its own (src/platform/db/pglite-worker.ts): a long
// report statement of one tenant delays the statements queued behind it, but not the requests
// that need none (/api/health answers from its checks' last results while the database is busy),
// and another tenant's cheap request waits at most for the statement under way. On PostgreSQL
// (a pool) the same figures hold trivially; the file runs on both.

/** Rows of the heavy tenant's rollup: enough that one report statement takes a few hundred ms (100,000 took 98 ms once on CI, under the 100 ms this file needs). */
const HEAVY_ROWS = 200_000;
const REPORT =
  "/api/v1/reports/events/performance?fields=tracker&conversionDateFrom=2026-04-01&conversionDateTo=2026-05-01";

/**
 * The database with the run time of every statement recorded: from its answer back to when it
 * could start, its sending or the previous answer, whichever is later (one statement runs at a
 * time on PGlite: the time it waited behind others is not its own).
 */
interface Run {
  from: number;
  to: number;
}

function timed(db: Db, runs: Run[]): Db {
  let lastAnswer = 0;
  return new Proxy(db, {
    get(target, prop) {
      if (prop === "query") {
        return async (text: string, params?: readonly unknown[]) => {
          const sent = performance.now();
          try {
            return await target.query(text, params);
          } finally {
            const answered = performance.now();
            runs.push({ from: Math.max(sent, lastAnswer), to: answered });
            lastAnswer = answered;
          }
        };
      }
      const value = Reflect.get(target, prop, target);
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

describe("a heavy report of one tenant and the others' requests", () => {
  let base: TestDb;
  let t: TestApp;
  let heavy: Tenancy;
  let other: Tenancy;
  const runs: Run[] = [];

  beforeAll(async () => {
    base = await openTestDb();
    t = await startTestApp({ testDb: { ...base, db: timed(base.db, runs) } });
    t.clock.set("2026-05-02T12:00:00.000Z");
    heavy = await seedTenancy(t);
    other = await seedTenancy(t);
    await base.db.query(
      `insert into daily_rollups
         (tenant_id, day, account_id, link_id, brand_id, program_id, traffic_source_id, tracker_id, country,
          clicks, unique_clicks, click_count)
       select $1, date '2026-05-01' - (i % 30), 1, 1, 1, 1, 0, i, 'DE', 1, 1, 1
         from generate_series(1, $2::int) i`,
      [heavy.tenantId, HEAVY_ROWS],
    );
    await base.db.exec("analyze daily_rollups");
  });

  afterAll(async () => {
    await t?.close();
    await base?.dispose();
  });

  it("answers /api/health in under 100 ms and the other tenant under the longest statement + 100 ms", async () => {
    const get = (url: string, who?: Tenancy) =>
      t.call({ method: "GET", url, headers: who ? { authorization: who.apiKey } : {} });
    // The health checks' first results, which they answer while the database is busy.
    expect((await get("/api/health")).statusCode).toBe(200);

    // The report alone: its longest single statement.
    const longestOf = () => runs.reduce((a, b) => (b.to - b.from > a.to - a.from ? b : a));
    runs.length = 0;
    const alone = await get(REPORT, heavy);
    expect(alone.statusCode, alone.body).toBe(200);
    const aloneRun = longestOf();
    // Heavy enough to have held the event loop well past 100 ms when PGlite ran on it.
    if (base.kind === "pglite") expect(aloneRun.to - aloneRun.from).toBeGreaterThan(100);

    const health: Run[] = [];
    const cheap: Run[] = [];
    const timedGet = async (into: Run[], url: string, who?: Tenancy) => {
      const from = performance.now();
      const res = await get(url, who);
      into.push({ from, to: performance.now() });
      expect(res.statusCode, res.body).toBe(200);
    };
    runs.length = 0;
    let done = false;
    const report = get(REPORT, heavy).finally(() => {
      done = true;
    });
    // Each asks again as soon as it has its answer (and a few ms more), until the report is done.
    const repeat = async (into: Run[], url: string, who?: Tenancy) => {
      while (!done) {
        await timedGet(into, url, who);
        await new Promise((resolve) => setTimeout(resolve, 5));
      }
    };
    await Promise.all([repeat(health, "/api/health"), repeat(cheap, "/api/v1/brands", other)]);
    expect((await report).statusCode).toBe(200);
    // The longest statement as it ran beside the others (slower than alone: they share the CPU).
    const heaviest = longestOf();
    const longest = heaviest.to - heaviest.from;
    const ms = (runs: Run[]) => Math.round(Math.max(...runs.map((r) => r.to - r.from)));
    // Health asked while that statement ran: none when PGlite ran on the event loop it held.
    const during = health.filter((r) => r.from > heaviest.from && r.from < heaviest.to);
    const figures = {
      longestStatementMs: Math.round(longest),
      healthMaxMs: ms(health),
      cheapMaxMs: ms(cheap),
      healthAskedDuringIt: during.length,
    };
    console.log(`[${base.kind}] heavy report beside other requests: ${JSON.stringify(figures)}`);
    if (base.kind === "pglite") {
      expect(during.length).toBeGreaterThan(0);
      expect(figures.healthMaxMs).toBeLessThan(100);
      expect(figures.cheapMaxMs).toBeLessThan(longest + 100);
    } else {
      // A pool: the goal is the other tenant's answer in under 250 ms (issue 30).
      expect(figures.healthMaxMs).toBeLessThan(250);
      expect(figures.cheapMaxMs).toBeLessThan(250);
    }
  });
});

describe.skipIf(inject("dbKind") === "postgres")("the embedded database's thread", () => {
  let test: TestDb;
  beforeAll(async () => {
    test = await openTestDb();
  });
  afterAll(() => test?.dispose());

  it("returns every value as it was given and errors with PostgreSQL's fields", async () => {
    const at = new Date("2026-05-01T10:11:12.345Z");
    const [row] = await test.db.query<Record<string, unknown>>(
      `select $1::timestamptz as at, 12.5::numeric(24, 4) as amount, $2::bytea as bytes, $3::jsonb as doc,
              array['a', 'b'] as names, 7::bigint as n, null::text as none`,
      [at, Buffer.from([0, 1, 255]), { a: [1, "x"], b: null }],
    );
    expect(row).toEqual({
      at,
      amount: "12.5000",
      bytes: new Uint8Array([0, 1, 255]),
      doc: { a: [1, "x"], b: null },
      names: ["a", "b"],
      n: 7,
      none: null,
    });
    await test.db.exec("create temporary table pairs (k int primary key)");
    await test.db.query("insert into pairs values (1)");
    const duplicate = await test.db.query("insert into pairs values (1)").then(
      () => undefined,
      (e: unknown) => e as Error & Record<string, unknown>,
    );
    expect(duplicate).toBeInstanceOf(Error);
    expect(duplicate).toMatchObject({ code: "23505", constraint: "pairs_pkey", detail: "Key (k)=(1) already exists." });
  });

  it("runs a transaction's statements together and rolls back on a throw", async () => {
    await test.db.exec("create temporary table steps (n int)");
    const order: string[] = [];
    await Promise.all([
      test.db.transaction(async (tx) => {
        await tx.query("insert into steps values (1)");
        await new Promise((resolve) => setTimeout(resolve, 30));
        await tx.query("insert into steps values (2)");
        order.push("first");
      }),
      test.db.query("insert into steps values (3)").then(() => order.push("outside")),
      test.db
        .transaction(async (tx) => {
          await tx.query("insert into steps values (4)");
          throw new Error("changed my mind");
        })
        .catch((e: Error) => order.push(e.message)),
    ]);
    expect(order).toEqual(["first", "outside", "changed my mind"]);
    const rows = await test.db.query<{ n: number }>("select n from steps order by n");
    expect(rows.map((r) => r.n)).toEqual([1, 2, 3]);
  });

  it("delivers notifications and stops when unlistened", async () => {
    const got: string[] = [];
    const stop = await test.db.listen("pglite_worker_test", (payload) => got.push(payload));
    await test.db.query("select pg_notify('pglite_worker_test', 'one')");
    await expect.poll(() => got).toEqual(["one"]);
    await stop();
    await test.db.query("select pg_notify('pglite_worker_test', 'two')");
    await test.db.query("select 1");
    expect(got).toEqual(["one"]);
  });
});
