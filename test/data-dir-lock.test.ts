import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPglite } from "../src/platform/db/pglite.js";
import { DirectoryLockedError } from "../src/platform/dir-lock.js";
import { freePort, type Started, start, startScript, waitFor } from "./helpers/process.js";

// One process per embedded database: a second `npm start` or `npm run seed` on the same
// DATA_DIR is refused at once, naming the directory and the pid that holds it.

const onPglite = inject("dbKind") === "pglite";

function seed(env: Record<string, string>): Started {
  return startScript("scripts/seed.ts", ["--days", "1", "--clicks", "5"], env);
}

/** A pid that surely belongs to no process any more: one that has just exited. */
async function deadPid(): Promise<number> {
  const child = spawn(process.execPath, ["-e", ""], { stdio: "ignore" });
  const pid = child.pid ?? 0;
  await new Promise((resolve) => child.on("exit", resolve));
  return pid;
}

describe.runIf(onPglite)("one process per embedded database", () => {
  let dataDir: string;
  let env: Record<string, string>;
  let port: number;

  beforeAll(async () => {
    dataDir = await mkdtemp(join(tmpdir(), "tp-lock-"));
    port = await freePort();
    env = { DATA_DIR: dataDir, PORT: String(port), HOST: "127.0.0.1", SEED_DEMO: "false" };
  });
  afterAll(() => rm(dataDir, { recursive: true, force: true }));

  it("refuses a second npm start and npm run seed on the same DATA_DIR; the first keeps running", async () => {
    const first = start([], env);
    try {
      await waitFor(first, /running roles/);
      const lockFile = join(dataDir, "pglite.lock");
      expect((await readFile(lockFile, "utf8")).trim()).toBe(String(first.child.pid));

      const startedAt = Date.now();
      const second = start([], { ...env, PORT: String(await freePort()) });
      expect(await second.exited).toBe(1);
      const message = second.output();
      expect(message).toContain(join(dataDir, "pglite"));
      expect(message).toContain(`pid ${first.child.pid}`);
      // A clear line, not a crash inside the database.
      expect(message).not.toContain("Aborted");
      expect(message).not.toMatch(/\n\s+at /);

      const seeding = seed(env);
      expect(await seeding.exited).toBe(1);
      expect(seeding.output()).toContain(`pid ${first.child.pid}`);
      expect(seeding.output()).toContain(join(dataDir, "pglite"));
      // Both were refused at once: no database was opened, let alone migrated.
      expect(Date.now() - startedAt).toBeLessThan(30_000);

      const health = await fetch(`http://127.0.0.1:${port}/api/health`);
      expect(health.status).toBe(200);
      expect((await readFile(lockFile, "utf8")).trim()).toBe(String(first.child.pid));
    } finally {
      first.child.kill("SIGTERM");
    }
    expect(await first.exited, first.output()).toBe(0);
    // A clean stop releases the directory.
    expect(existsSync(join(dataDir, "pglite.lock"))).toBe(false);
  }, 120_000);

  it("takes over a lock left by a process that died", async () => {
    const lockFile = join(dataDir, "pglite.lock");
    const pid = await deadPid();
    await writeFile(lockFile, `${pid}\n`);
    const next = start([], env);
    try {
      await waitFor(next, /running roles/);
      expect((await readFile(lockFile, "utf8")).trim()).toBe(String(next.child.pid));
    } finally {
      next.child.kill("SIGTERM");
    }
    expect(await next.exited, next.output()).toBe(0);
    expect(existsSync(lockFile)).toBe(false);
  }, 120_000);

  it("refuses a second open in the same process until the first is closed", async () => {
    const dir = join(dataDir, "in-process");
    const db = await openPglite({ dataDir: dir });
    try {
      const error = await openPglite({ dataDir: dir }).catch((e: unknown) => e);
      expect(error).toBeInstanceOf(DirectoryLockedError);
      expect((error as DirectoryLockedError).message).toContain(dir);
      expect((error as DirectoryLockedError).holderPid).toBe(process.pid);
    } finally {
      await db.close();
    }
    const again = await openPglite({ dataDir: dir });
    expect(await again.query<{ one: number }>("select 1 as one")).toEqual([{ one: 1 }]);
    await again.close();
    expect(existsSync(`${dir}.lock`)).toBe(false);
  }, 60_000);
});
