import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../../config.js";
import { openPglite } from "./pglite.js";
import { openPostgres } from "./postgres.js";
import type { Db } from "./types.js";

export { migrate } from "./migrate.js";
export type { Db, Queryable } from "./types.js";

/** PostgreSQL when DATABASE_URL is set, otherwise the embedded database under DATA_DIR. */
export async function openDatabase(config: Pick<Config, "databaseUrl" | "dataDir">): Promise<Db> {
  if (config.databaseUrl !== undefined) return openPostgres({ connectionString: config.databaseUrl });
  const dataDir = join(config.dataDir, "pglite");
  await mkdir(dataDir, { recursive: true });
  return openPglite({ dataDir });
}
