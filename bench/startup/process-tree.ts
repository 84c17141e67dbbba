import { readdirSync, readFileSync } from "node:fs";

/**
 * What a process and its descendants hold, read from /proc (Linux): the resident set of each
 * and its command, so a figure names what it sums (npm, the tsx wrapper, the server) rather
 * than assuming which of them are there.
 */
export interface ProcessInfo {
  pid: number;
  command: string;
  rssBytes: number;
}

const PAGE_BYTES = 4096;

function read(path: string): string | null {
  try {
    return readFileSync(path, "utf8");
  } catch {
    return null;
  }
}

/** The parent of every live process, from /proc/<pid>/stat (field 4, after the parenthesized name). */
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    const stat = read(`/proc/${entry}/stat`);
    if (stat === null) continue;
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    map.set(Number(entry), Number(fields[1]));
  }
  return map;
}

function info(pid: number): ProcessInfo | null {
  const statm = read(`/proc/${pid}/statm`);
  const cmdline = read(`/proc/${pid}/cmdline`);
  if (statm === null || cmdline === null) return null;
  const resident = Number(statm.split(" ")[1]);
  const command = cmdline.split("\0").filter(Boolean).join(" ");
  return {
    pid,
    command: command.length > 120 ? `${command.slice(0, 117)}...` : command,
    rssBytes: resident * PAGE_BYTES,
  };
}

/** The process and every descendant still alive, the root first. */
export function processTree(root: number): ProcessInfo[] {
  const byParent = new Map<number, number[]>();
  for (const [pid, parent] of parents()) {
    const list = byParent.get(parent) ?? [];
    list.push(pid);
    byParent.set(parent, list);
  }
  const tree: ProcessInfo[] = [];
  const queue = [root];
  while (queue.length > 0) {
    const pid = queue.shift() as number;
    const found = info(pid);
    if (found) tree.push(found);
    queue.push(...(byParent.get(pid) ?? []));
  }
  return tree;
}

/** Peak resident set of one process so far (VmHWM), or null when it is gone. */
export function peakRss(pid: number): number | null {
  const status = read(`/proc/${pid}/status`);
  const match = status === null ? null : /VmHWM:\s+(\d+) kB/.exec(status);
  return match?.[1] === undefined ? null : Number(match[1]) * 1024;
}
