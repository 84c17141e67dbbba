import { spawn, spawnSync } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdir, mkdtemp, readFile, rm, stat, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";
import { openPglite } from "../src/platform/db/pglite.js";
import { DirectoryLockedError, LOCK_STALE_MS } from "../src/platform/dir-lock.js";
import { LOCK_HOLDER_SCRIPT } from "./helpers/lock-holder.js";
import { freePort, run, type Started, start, startScript, waitFor } from "./helpers/process.js";

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

/** The pid a lock file names (its first line). */
async function lockPid(file: string): Promise<string> {
  return (await readFile(file, "utf8")).split("\n")[0] ?? "";
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
      expect(await lockPid(lockFile)).toBe(String(first.child.pid));

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
      expect(await lockPid(lockFile)).toBe(String(first.child.pid));
    } finally {
      first.child.kill("SIGTERM");
    }
    expect(await first.exited, first.output()).toBe(0);
    // A clean stop releases the directory.
    expect(existsSync(join(dataDir, "pglite.lock"))).toBe(false);
  }, 120_000);

  it("takes over a lock left by a process that died", async () => {
    const lockFile = join(dataDir, "pglite.lock");
    // Killed outright: no exit hook removed its lock, and its heartbeat is fresh.
    const crashed = holder(join(dataDir, "pglite"));
    await waitFor(crashed, /locked/, 20_000);
    crashed.child.kill("SIGKILL");
    await crashed.exited;
    expect(await lockPid(lockFile)).toBe(String(crashed.child.pid));
    const next = start([], env);
    try {
      await waitFor(next, /running roles/);
      expect(await lockPid(lockFile)).toBe(String(next.child.pid));
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

// The lock holds whatever the pid in it says: a holder in another pid namespace (a second
// container on the same volume) names a pid that means nothing here, so its heartbeat decides.
// These run on both databases: the click spill directory is locked the same way on PostgreSQL.

const canUnshare =
  process.platform === "linux" &&
  spawnSync("unshare", ["--pid", "--fork", "--mount-proc", "true"], { stdio: "ignore" }).status === 0;

/** test/helpers/lock-holder.ts on `dir`, in a new pid namespace of its own when `ownPidNamespace`. */
function holder(dir: string, options: { heartbeatMs?: number; ownPidNamespace?: boolean } = {}): Started {
  const args = ["--import", "tsx", LOCK_HOLDER_SCRIPT, dir, String(options.heartbeatMs ?? 5_000)];
  const env = { PATH: process.env.PATH ?? "" };
  return options.ownPidNamespace
    ? run("unshare", ["--pid", "--fork", "--mount-proc", process.execPath, ...args], { env })
    : run(process.execPath, args, { env });
}

describe("a directory lock across pid namespaces", () => {
  let root: string;
  let count = 0;
  /** A fresh directory to lock, and its lock file. */
  const fresh = async () => {
    const dir = join(root, `dir-${++count}`);
    await mkdir(dir);
    return { dir, file: `${dir}.lock` };
  };

  beforeAll(async () => {
    root = await mkdtemp(join(tmpdir(), "tp-nslock-"));
  });
  afterAll(() => rm(root, { recursive: true, force: true }));

  it("refuses a lock whose holder it cannot see while its heartbeat is fresh, and takes it over once stale", async () => {
    const { dir, file } = await fresh();
    // As a holder in another container writes it: a pid that is no process here.
    const pid = await deadPid();
    const foreign = `${pid}\n${"f".repeat(32)}\nanother-boot pid:[4026530000] another-container\n`;
    await writeFile(file, foreign);

    const refused = holder(dir);
    expect(await refused.exited, refused.output()).toBe(1);
    expect(refused.output()).toContain(`in use by another process (pid ${pid} on another host or in another container`);
    expect(refused.output()).toContain(`not refreshed for ${LOCK_STALE_MS / 1000} s is taken over`);
    expect(await readFile(file, "utf8")).toBe(foreign);

    // Its holder stopped beating longer ago than a holder can pause: gone.
    const past = new Date(Date.now() - LOCK_STALE_MS - 5_000);
    await utimes(file, past, past);
    const next = holder(dir);
    await waitFor(next, /locked/, 20_000);
    expect(await lockPid(file)).toBe(String(next.child.pid));
    next.child.kill("SIGTERM");
    expect(await next.exited).toBe(0);
    expect(existsSync(file)).toBe(false);
  }, 60_000);

  it("refreshes the lock while it holds it", async () => {
    const { dir, file } = await fresh();
    const held = holder(dir, { heartbeatMs: 100 });
    try {
      await waitFor(held, /locked/, 20_000);
      const past = new Date(Date.now() - 120_000);
      await utimes(file, past, past);
      const deadline = Date.now() + 5_000;
      while (Date.now() - (await stat(file)).mtimeMs > 2_000 && Date.now() < deadline) {
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
      expect(Date.now() - (await stat(file)).mtimeMs).toBeLessThan(2_000);
    } finally {
      held.child.kill("SIGTERM");
    }
    expect(await held.exited).toBe(0);
  }, 60_000);

  it("an exiting process deletes the lock only while it is still its own, whatever the pid says", async () => {
    const { dir, file } = await fresh();
    const first = holder(dir);
    await waitFor(first, /locked/, 20_000);
    // Another holder's lock under the same pid (as pid 1 of two containers): a different token.
    const [pidLine, , where] = (await readFile(file, "utf8")).split("\n");
    const someoneElses = `${pidLine}\n${"e".repeat(32)}\n${where}\n`;
    await writeFile(file, someoneElses);
    first.child.kill("SIGTERM");
    expect(await first.exited).toBe(0);
    expect(await readFile(file, "utf8")).toBe(someoneElses);
  }, 60_000);

  // The real thing where this machine allows it (root with unshare); otherwise the tests above
  // simulate it with lock files written as another namespace's holder writes them.
  it.runIf(canUnshare)(
    "a second process in another pid namespace, with the same pid 1, is refused and leaves the lock alone",
    async () => {
      const { dir, file } = await fresh();
      const first = holder(dir, { ownPidNamespace: true });
      try {
        await waitFor(first, /locked/, 20_000);
        const content = await readFile(file, "utf8");
        expect(await lockPid(file)).toBe("1");

        const second = holder(dir, { ownPidNamespace: true });
        expect(await second.exited, second.output()).toBe(1);
        expect(second.output()).toContain("pid 1 on another host or in another container");
        // Nor from this namespace, where pid 1 is another process.
        const third = holder(dir);
        expect(await third.exited, third.output()).toBe(1);
        expect(await readFile(file, "utf8")).toBe(content);
      } finally {
        // unshare does not pass signals on: the holder is its child, pid 1 of the namespace.
        const children = await readFile(`/proc/${first.child.pid}/task/${first.child.pid}/children`, "utf8");
        for (const pid of children.trim().split(/\s+/).filter(Boolean)) process.kill(Number(pid), "SIGTERM");
      }
      expect(await first.exited, first.output()).toBe(0);
      expect(existsSync(file)).toBe(false);
    },
    60_000,
  );
});
