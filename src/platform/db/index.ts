import { mkdir } from "node:fs/promises";
import { join } from "node:path";
import type { Config } from "../../config.js";
import { openPglite } from "./pglite.js";
import { openPostgres } from "./postgres.js";
import { DEFAULT_STATEMENT_TIMEOUT_MS } from "./statement-timeout.js";
import type { Db } from "./types.js";

export { isUniqueViolation } from "./errors.js";
export { migrate } from "./migrate.js";
export { prepared, statementText } from "./prepared.js";
export type { Db, Queryable } from "./types.js";

/**
 * PostgreSQL when DATABASE_URL is set, otherwise the embedded database under DATA_DIR. On
 * PostgreSQL every statement runs under STATEMENT_TIMEOUT_MS but those issued through
 * `unbounded()` (the scheduled jobs, the migrations); PGlite cannot interrupt a
 * statement (it runs each to its end, on a worker thread of its own), so there the bounds on
 * what a request may ask for are what holds (docs/limits.md).
 */
export async function openDatabase(
  config: Pick<Config, "databaseUrl" | "dataDir"> & Partial<Pick<Config, "statementTimeoutMs">>,
): Promise<Db> {
  if (config.databaseUrl !== undefined) {
    return openPostgres({
      connectionString: config.databaseUrl,
      statementTimeoutMs: config.statementTimeoutMs ?? DEFAULT_STATEMENT_TIMEOUT_MS,
    });
  }
  const dataDir = join(config.dataDir, "pglite");
  await mkdir(dataDir, { recursive: true });
  return openPglite({ dataDir });
}
