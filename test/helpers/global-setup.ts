import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import type { TestProject } from "vitest/node";
import { ensureWebBuilt } from "../../scripts/build-web.js";
import { migrate } from "../../src/platform/db/migrate.js";
import { openPglite } from "../../src/platform/db/pglite.js";

declare module "vitest" {
  export interface ProvidedContext {
    dbKind: "pglite" | "postgres";
    pgliteTemplate: string;
  }
}

/** Migrates one PGlite once and saves its files; every test file starts from a copy. */
export default async function setup(project: TestProject) {
  // The dashboard's tests read its build (web/dist): built here when missing or stale, as npm start does.
  await ensureWebBuilt();
  const dir = await mkdtemp(join(tmpdir(), "tp-template-"));
  const db = await openPglite({ dataDir: join(dir, "db") });
  await migrate(db);
  await db.close();
  const { dumpPglite } = await import("../../src/platform/db/pglite.js");
  const dump = await dumpPglite(join(dir, "db"));
  const file = join(dir, "template.tar");
  await writeFile(file, Buffer.from(await dump.arrayBuffer()));
  project.provide("pgliteTemplate", file);
  return async () => {
    await rm(dir, { recursive: true, force: true });
  };
}
