import { randomBytes } from "node:crypto";
import {
  closeSync,
  openSync,
  readFileSync,
  readlinkSync,
  renameSync,
  statSync,
  unlinkSync,
  utimesSync,
  writeSync,
} from "node:fs";
import { hostname } from "node:os";
import { resolve } from "node:path";

/**
 * How often the holder refreshes its lock file's mtime (its heartbeat), and how long a lock whose
 * holder this process cannot see must go without one before it is taken over. The window is
 * long against the interval: the holder may pause (a long synchronous step, a stopped or
 * swapped container, a suspended VM) and a takeover while it lives would let two processes
 * write the same files. It is only waited out after a crash: a clean exit deletes the lock.
 */
export const LOCK_HEARTBEAT_MS = 5_000;
export const LOCK_STALE_MS = 60_000;

/** Another live process holds the lock: the caller must not touch what it guards. */
export class DirectoryLockedError extends Error {
  constructor(
    readonly directory: string,
    readonly holderPid: number,
    readonly lockFile: string,
    /** Set when the holder runs where this process cannot see its pid: how long since its heartbeat. */
    readonly heartbeatAgeMs?: number,
    readonly staleMs = LOCK_STALE_MS,
  ) {
    super(
      heartbeatAgeMs === undefined
        ? `${directory} is in use by another process (pid ${holderPid}): one process per directory. ` +
            `Stop that process first; if no such process runs, delete ${lockFile}.`
        : `${directory} is in use by another process (pid ${holderPid} on another host or in another ` +
            `container, its lock refreshed ${Math.round(heartbeatAgeMs / 1000)} s ago): one process per directory. ` +
            `Stop that process first; a lock not refreshed for ${Math.round(staleMs / 1000)} s is taken over.`,
    );
    this.name = "DirectoryLockedError";
  }
}

export interface DirectoryLock {
  readonly file: string;
  release(): void;
}

export interface LockOptions {
  heartbeatMs?: number;
  staleMs?: number;
}

// Locks this process holds, so that a second open in the same process is refused too
// (the pid in the file would otherwise look like our own leftover).
const held = new Set<string>();

/** What a lock file says: written once by its creator, `pid\ntoken\nwhere\n`. */
interface Holder {
  pid: number;
  /** Random per lock: whose lock it is, whatever the pid (pids repeat across namespaces). */
  token: string;
  /** The pid namespace the pid means something in (see `whereWeRun`); "" in an old lock file. */
  where: string;
}

function readHolder(file: string): Holder | null {
  try {
    const [pidLine = "", token = "", where = ""] = readFileSync(file, "utf8").split("\n");
    const pid = Number.parseInt(pidLine.trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? { pid, token: token.trim(), where: where.trim() } : null;
  } catch {
    return null;
  }
}

function readFileOrNull(file: string): string | null {
  try {
    return readFileSync(file, "utf8");
  } catch {
    return null;
  }
}

function readProc(path: string, read: (path: string) => string): string {
  try {
    return read(path).trim();
  } catch {
    return "-";
  }
}

/**
 * Where our pid is meaningful: the machine's boot, its pid namespace, its host name. Two
 * containers on one volume differ in the namespace (and usually the name), two machines in the
 * boot. Only when this is equal can a pid in the lock file be checked with a signal.
 */
const whereWeRun = [
  readProc("/proc/sys/kernel/random/boot_id", (p) => readFileSync(p, "utf8")),
  readProc("/proc/self/ns/pid", readlinkSync),
  hostname(),
].join(" ");

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user, so it is alive.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

function heartbeatAgeMs(file: string): number | null {
  try {
    return Date.now() - statSync(file).mtimeMs;
  } catch {
    return null;
  }
}

/**
 * An exclusive lock on a directory for this process: a file `<directory>.lock` created with
 * O_EXCL holding our pid, a random token and where our pid means something (see `whereWeRun`).
 * While held, its mtime is refreshed every `heartbeatMs`. A lock is taken over when its holder
 * is surely gone: run where we run, with a pid that is not alive (or our own pid: a previous
 * life of this process under the same pid); run elsewhere (another container's pid namespace,
 * another machine), when its heartbeat is older than `staleMs`. The file is removed on release
 * and, as a best effort, when the process exits, only if it still holds our token.
 * Heartbeats compare mtimes with this machine's clock: share a directory between containers of
 * one host, not between machines.
 */
export function lockDirectory(directory: string, options: LockOptions = {}): DirectoryLock {
  const heartbeatMs = options.heartbeatMs ?? LOCK_HEARTBEAT_MS;
  const staleMs = options.staleMs ?? LOCK_STALE_MS;
  const dir = resolve(directory);
  const file = `${dir}.lock`;
  if (held.has(file)) throw new DirectoryLockedError(dir, process.pid, file);
  const token = randomBytes(16).toString("hex");
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, "wx", 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const content = readFileOrNull(file);
      const holder = readHolder(file);
      // No pid yet: its creator is between open and write; look again.
      if (holder === null) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
        if (readHolder(file) === null && attempt >= 2) takeOver(file, content);
        continue;
      }
      if (holder.where === whereWeRun) {
        if (holder.pid !== process.pid && alive(holder.pid)) throw new DirectoryLockedError(dir, holder.pid, file);
      } else {
        // The pid names a process we cannot see (or, in an old lock file, one we may): only the
        // heartbeat tells whether it lives.
        if (holder.where === "" && alive(holder.pid)) throw new DirectoryLockedError(dir, holder.pid, file);
        const age = heartbeatAgeMs(file);
        if (age === null) continue;
        if (age < staleMs) throw new DirectoryLockedError(dir, holder.pid, file, Math.max(0, age), staleMs);
      }
      takeOver(file, content, holder.where === whereWeRun ? undefined : staleMs);
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n${token}\n${whereWeRun}\n`);
    } finally {
      closeSync(fd);
    }
    held.add(file);
    const heartbeat = setInterval(() => {
      if (readHolder(file)?.token !== token) {
        // Taken over (or deleted by hand): refreshing it would keep someone else's lock alive.
        clearInterval(heartbeat);
        process.emitWarning(`${file} no longer holds this process's lock: another process may use ${dir}`);
        return;
      }
      try {
        const now = new Date();
        utimesSync(file, now, now);
      } catch {
        // Gone in between: the next beat says so.
      }
    }, heartbeatMs);
    heartbeat.unref();
    const onExit = () => removeIfOurs(file, token);
    process.once("exit", onExit);
    return {
      file,
      release() {
        if (!held.delete(file)) return;
        clearInterval(heartbeat);
        process.removeListener("exit", onExit);
        removeIfOurs(file, token);
      },
    };
  }
  throw new Error(`could not lock ${dir}: ${file} keeps changing`);
}

/**
 * Moves a stale lock aside, then checks that what was moved is the stale one: if another
 * process took it over in between (or its holder's heartbeat came back), the lock is put back
 * and the next attempt sees it.
 */
function takeOver(file: string, staleContent: string | null, staleMs?: number): void {
  const aside = `${file}.stale-${process.pid}-${randomBytes(4).toString("hex")}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  // A heartbeat between the look and the move means the holder lives after all.
  const stillStale = staleMs === undefined || (heartbeatAgeMs(aside) ?? 0) >= staleMs;
  if (readFileOrNull(aside) === staleContent && stillStale) {
    unlinkSync(aside);
    return;
  }
  renameSync(aside, file);
}

function removeIfOurs(file: string, token: string): void {
  try {
    if (readHolder(file)?.token === token) unlinkSync(file);
  } catch {
    // Already gone: nothing to release.
  }
}
