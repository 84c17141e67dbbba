import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { prepared, type Queryable } from "../src/platform/db/index.js";
import { openTestDb, type TestDb } from "./helpers/db.js";

// The hot paths' statements are prepared once per connection (platform/db/prepared.ts), and the
// delivery workers' bookkeeping commits without waiting for the WAL flush (Db.withoutFlushWait).
// Both are PostgreSQL session facts, read back from PostgreSQL itself; on PGlite the same calls
// run the text as it is.

const NAMED = prepared("test.named-sum", "select $1::int + $2::int as sum");
const COUNTED = prepared("test.array-count", "select cardinality($1::int[]) as n");

describe("prepared statements and commits without the flush wait", () => {
  let testDb: TestDb;

  beforeAll(async () => {
    testDb = await openTestDb();
  });
  afterAll(async () => testDb?.dispose());

  it("runs a prepared statement like its text, prepared once per connection on PostgreSQL", async () => {
    const { db } = testDb;
    // In one transaction: one connection, whose prepared statements PostgreSQL lists.
    const listed = await db.transaction(async (tx) => {
      for (let i = 0; i < 3; i += 1) expect(await tx.query(NAMED, [i, 2])).toEqual([{ sum: i + 2 }]);
      if (testDb.kind !== "postgres") return [];
      return tx.query<{ name: string; calls: number }>(
        "select name, generic_plans + custom_plans as calls from pg_prepared_statements where name = $1",
        [NAMED.name],
      );
    });
    if (testDb.kind === "postgres") expect(listed).toEqual([{ name: NAMED.name, calls: 3 }]);
  });

  it("runs a prepared statement as a plain one when an array parameter is long (a large batch)", async () => {
    const preparedNow = (tx: Queryable) =>
      tx.query<{ name: string }>("select name from pg_prepared_statements where name = $1", [COUNTED.name]);
    await testDb.db.transaction(async (tx) => {
      const long = Array.from({ length: 500 }, (_, i) => i);
      expect(await tx.query(COUNTED, [long])).toEqual([{ n: 500 }]);
      if (testDb.kind === "postgres") expect(await preparedNow(tx)).toEqual([]);
      expect(await tx.query(COUNTED, [[1, 2, 3]])).toEqual([{ n: 3 }]);
      if (testDb.kind === "postgres") expect(await preparedNow(tx)).toEqual([{ name: COUNTED.name }]);
    });
  });

  it("refuses a second statement under a name already taken by another text", () => {
    expect(prepared("test.named-sum", "select $1::int + $2::int as sum")).toEqual(NAMED);
    expect(() => prepared("test.named-sum", "select 1")).toThrow("two prepared statements are named 'test.named-sum'");
  });

  it("commits without the flush wait only through withoutFlushWait, and switches back", async () => {
    const { db } = testDb;
    const setting = async (of: typeof db) =>
      (await of.query<{ synchronous_commit: string }>("show synchronous_commit"))[0]?.synchronous_commit;
    if (testDb.kind !== "postgres") {
      expect(db.withoutFlushWait()).toBe(db);
      return;
    }
    expect(await setting(db)).toBe("on");
    expect(await setting(db.withoutFlushWait())).toBe("off");
    const inTransaction = await db
      .withoutFlushWait()
      .transaction(
        async (tx) => (await tx.query<{ s: string }>("select current_setting('synchronous_commit') as s"))[0]?.s,
      );
    expect(inTransaction).toBe("off");
    // Every connection the pool lends for other work is back to waiting for the flush.
    const again = await Promise.all(Array.from({ length: 12 }, () => setting(db)));
    expect(new Set(again)).toEqual(new Set(["on"]));
  });
});
