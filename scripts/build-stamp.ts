import { readdirSync, statSync } from "node:fs";
import { join } from "node:path";

/** Written last into a build's directory: a build that stopped half-way has none, and is built again. */
export const BUILD_STAMP = ".build-complete";

/** The newest modification time of a file, or of anything under a directory (0 when absent). */
function newestMtime(path: string): number {
  const stat = statSync(path, { throwIfNoEntry: false });
  if (!stat) return 0;
  if (!stat.isDirectory()) return stat.mtimeMs;
  let newest = stat.mtimeMs;
  for (const entry of readdirSync(path)) newest = Math.max(newest, newestMtime(join(path, entry)));
  return newest;
}

/** True when the build in `dist` is complete and newer than every one of `sources`. */
export function buildIsFresh(dist: string, sources: readonly string[]): boolean {
  const stamp = statSync(join(dist, BUILD_STAMP), { throwIfNoEntry: false });
  if (!stamp) return false;
  return stamp.mtimeMs >= Math.max(...sources.map(newestMtime));
}
