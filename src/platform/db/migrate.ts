import { readdir, readFile } from "node:fs/promises";
import type { Db } from "./types.js";

const MIGRATIONS_DIR = new URL("../../../migrations/", import.meta.url);
const FILE_NAME = /^(\d{4})_[a-z0-9_]+\.sql$/;
// One cluster-wide key: every node migrating the same database queues behind it.
const MIGRATION_LOCK_KEY = 7_201_004;

export interface Migration {
  version: number;
  name: string;
  sql: string;
}

export async function loadMigrations(): Promise<Migration[]> {
  const files = (await readdir(MIGRATIONS_DIR)).filter((file) => file.endsWith(".sql")).sort();
  const migrations: Migration[] = [];
  for (const file of files) {
    const match = FILE_NAME.exec(file);
    if (!match?.[1]) throw new Error(`Migration file '${file}' must be named NNNN_name.sql`);
    const version = Number(match[1]);
    if (migrations.some((m) => m.version === version)) throw new Error(`Two migrations share version ${version}`);
    migrations.push({ version, name: file, sql: await readFile(new URL(file, MIGRATIONS_DIR), "utf8") });
  }
  return migrations;
}

async function allApplied(db: Db, migrations: Migration[]): Promise<boolean> {
  // In the schema the migrations create their tables in (the first of the search path), not
  // one further along it: a fresh schema in front of a migrated one is not migrated.
  const [table] = await db.query<{ found: string | null }>(
    "select to_regclass(format('%I.schema_migrations', current_schema()))::text as found",
  );
  if (table?.found === null || table?.found === undefined) return false;
  const rows = await db.query<{ version: number }>(`select version from ${table.found}`);
  const applied = new Set(rows.map((row) => Number(row.version)));
  return migrations.every((migration) => applied.has(migration.version));
}

/**
 * Applies the migrations not yet applied, each in its own transaction that first takes the
 * cluster-wide advisory lock and re-checks its version row, so two nodes starting at once
 * apply each migration exactly once. Forward only: there is no down.
 */
export async function migrate(db: Db): Promise<number[]> {
  const migrations = await loadMigrations();
  // A restart finds every migration applied: one read, not a locked transaction per migration.
  if (await allApplied(db, migrations)) return [];
  await db.transaction(async (tx) => {
    await tx.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
    await tx.exec(`create table if not exists schema_migrations (
      version integer primary key,
      name text not null,
      applied_at timestamptz not null default now()
    )`);
  });
  const applied: number[] = [];
  for (const migration of migrations) {
    const ran = await db.transaction(async (tx) => {
      await tx.query("select pg_advisory_xact_lock($1)", [MIGRATION_LOCK_KEY]);
      const done = await tx.query("select 1 from schema_migrations where version = $1", [migration.version]);
      if (done.length > 0) return false;
      await tx.exec(migration.sql);
      await tx.query("insert into schema_migrations (version, name) values ($1, $2)", [
        migration.version,
        migration.name,
      ]);
      return true;
    });
    if (ran) applied.push(migration.version);
  }
  return applied;
}
