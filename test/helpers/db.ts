import { randomBytes } from "node:crypto";
import { readFile } from "node:fs/promises";
import pg from "pg";
import { inject } from "vitest";
import { migrate } from "../../src/platform/db/migrate.js";
import { openPglite } from "../../src/platform/db/pglite.js";
import { openPostgres } from "../../src/platform/db/postgres.js";
import type { Db } from "../../src/platform/db/types.js";

export interface TestDb {
  db: Db;
  kind: "pglite" | "postgres";
  /** For PostgreSQL only: opens another pool on the same schema (a second node). */
  openAnother(): Db;
  /** Closes the database (if still open) and drops the schema. */
  dispose(): Promise<void>;
}

export function postgresUrl(): string {
  const url = process.env.TEST_DATABASE_URL;
  if (!url) throw new Error("TEST_DATABASE_URL is not set");
  return url;
}

/** A fresh schema on PostgreSQL, created empty: for tests of the migrations themselves. */
export async function createPostgresSchema(): Promise<{ schema: string; drop(): Promise<void> }> {
  const schema = `t_${randomBytes(6).toString("hex")}`;
  const admin = new pg.Client({ connectionString: postgresUrl() });
  await admin.connect();
  await admin.query(`create schema ${schema}`);
  await admin.end();
  return {
    schema,
    async drop() {
      const client = new pg.Client({ connectionString: postgresUrl() });
      await client.connect();
      await client.query(`drop schema if exists ${schema} cascade`);
      await client.end();
    },
  };
}

/** A migrated database of the kind this test project runs on, isolated from every other file. */
export async function openTestDb(): Promise<TestDb> {
  if (inject("dbKind") === "postgres") {
    const { schema, drop } = await createPostgresSchema();
    const extra: Db[] = [];
    const db = openPostgres({ connectionString: postgresUrl(), schema, max: 5 });
    await migrate(db);
    return {
      db,
      kind: "postgres",
      openAnother() {
        const another = openPostgres({ connectionString: postgresUrl(), schema, max: 5 });
        extra.push(another);
        return another;
      },
      async dispose() {
        await Promise.all([db, ...extra].map((d) => d.close()));
        await drop();
      },
    };
  }
  const template = await readFile(inject("pgliteTemplate"));
  const db = await openPglite({ loadDataDir: new Blob([template]) });
  return {
    db,
    kind: "pglite",
    openAnother() {
      throw new Error("PGlite is one connection: a second node needs PostgreSQL");
    },
    dispose: () => db.close(),
  };
}
