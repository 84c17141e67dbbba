import { closeSync, openSync, readFileSync, renameSync, unlinkSync, writeSync } from "node:fs";
import { resolve } from "node:path";

/** Another live process holds the lock: the caller must not touch what it guards. */
export class DirectoryLockedError extends Error {
  constructor(
    readonly directory: string,
    readonly holderPid: number,
    readonly lockFile: string,
  ) {
    super(
      `${directory} is in use by another process (pid ${holderPid}): one process per directory. ` +
        `Stop that process first; if no such process runs, delete ${lockFile}.`,
    );
    this.name = "DirectoryLockedError";
  }
}

export interface DirectoryLock {
  readonly file: string;
  release(): void;
}

// Locks this process holds, so that a second open in the same process is refused too
// (the pid in the file would otherwise look like our own leftover).
const held = new Set<string>();

function readPid(file: string): number | null {
  try {
    const pid = Number.parseInt(readFileSync(file, "utf8").trim(), 10);
    return Number.isInteger(pid) && pid > 0 ? pid : null;
  } catch {
    return null;
  }
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (error) {
    // EPERM: it exists but belongs to another user, so it is alive.
    return (error as NodeJS.ErrnoException).code === "EPERM";
  }
}

/**
 * An exclusive lock on a directory for this process: a file `<directory>.lock` created with
 * O_EXCL holding our pid. A lock whose pid is not alive (or is our own pid: a previous life of
 * this process under the same pid, as in a restarted container) is stale and taken over. The
 * file is removed on release and, as a best effort, when the process exits. Only processes on
 * this machine are detected: do not share the directory across machines.
 */
export function lockDirectory(directory: string): DirectoryLock {
  const dir = resolve(directory);
  const file = `${dir}.lock`;
  if (held.has(file)) throw new DirectoryLockedError(dir, process.pid, file);
  for (let attempt = 0; attempt < 5; attempt++) {
    let fd: number;
    try {
      fd = openSync(file, "wx", 0o644);
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const pid = readPid(file);
      // No pid yet: its creator is between open and write; look again.
      if (pid === null) {
        Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, 50);
        if (readPid(file) === null && attempt >= 2) takeOver(file, null);
        continue;
      }
      if (pid !== process.pid && alive(pid)) throw new DirectoryLockedError(dir, pid, file);
      takeOver(file, pid);
      continue;
    }
    try {
      writeSync(fd, `${process.pid}\n`);
    } finally {
      closeSync(fd);
    }
    held.add(file);
    const onExit = () => removeIfOurs(file);
    process.once("exit", onExit);
    return {
      file,
      release() {
        if (!held.delete(file)) return;
        process.removeListener("exit", onExit);
        removeIfOurs(file);
      },
    };
  }
  throw new Error(`could not lock ${dir}: ${file} keeps changing`);
}

/**
 * Moves a stale lock aside, then checks that what was moved is the stale one: if another
 * process took it over in between, its fresh lock is put back and the next attempt sees it.
 */
function takeOver(file: string, stalePid: number | null): void {
  const aside = `${file}.stale-${process.pid}`;
  try {
    renameSync(file, aside);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === "ENOENT") return;
    throw error;
  }
  if (readPid(aside) === stalePid) {
    unlinkSync(aside);
    return;
  }
  renameSync(aside, file);
}

function removeIfOurs(file: string): void {
  try {
    if (readPid(file) === process.pid) unlinkSync(file);
  } catch {
    // Already gone: nothing to release.
  }
}
