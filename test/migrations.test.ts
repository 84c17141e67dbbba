import { describe, expect, it } from "vitest";
import { loadMigrations, migrate } from "../src/platform/db/migrate.js";
import { openPglite } from "../src/platform/db/pglite.js";
import { openPostgres } from "../src/platform/db/postgres.js";
import { createPostgresSchema, openTestDb, postgresUrl } from "./helpers/db.js";

describe("migrations", () => {
  it("are numbered files applied in order, once", async () => {
    const migrations = await loadMigrations();
    expect(migrations.map((m) => m.version)).toEqual([...migrations.map((m) => m.version)].sort((a, b) => a - b));
    const db = await openPglite();
    try {
      expect(await migrate(db)).toEqual(migrations.map((m) => m.version));
      expect(await migrate(db)).toEqual([]);
      const rows = await db.query<{ version: number }>("select version from schema_migrations order by version");
      expect(rows.map((r) => r.version)).toEqual(migrations.map((m) => m.version));
    } finally {
      await db.close();
    }
  });

  it("leave an already migrated database untouched", async () => {
    const { db, dispose } = await openTestDb();
    try {
      expect(await migrate(db)).toEqual([]);
    } finally {
      await dispose();
    }
  });

  it.runIf(process.env.TEST_DATABASE_URL)("are safe when two nodes start at once on one PostgreSQL", async () => {
    const { schema, drop } = await createPostgresSchema();
    const nodes = [0, 1, 2].map(() => openPostgres({ connectionString: postgresUrl(), schema, max: 2 }));
    try {
      const results = await Promise.all(nodes.map((db) => migrate(db)));
      const all = (await loadMigrations()).map((m) => m.version);
      // Each version was applied by exactly one node.
      expect(results.flat().sort((a, b) => a - b)).toEqual(all);
      const [first] = nodes;
      const rows = await first?.query<{ n: number }>("select count(*)::int as n from schema_migrations");
      expect(rows?.[0]?.n).toBe(all.length);
    } finally {
      await Promise.all(nodes.map((db) => db.close()));
      await drop();
    }
  });
});
