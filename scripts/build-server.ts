/**
 * Compiles the server (src/) to JavaScript in dist/ when that build is missing or older than its
 * sources, and skips it otherwise; `npm start` runs it first (prestart) and starts dist/main.js.
 * Running the TypeScript through tsx instead costs every start its loader (a thread of its own,
 * 40-50 MB more resident, 1.5 to 2 s of CPU); tests and the other scripts still run the sources.
 *
 * Each file is compiled on its own (no bundle) into the same place under dist/ as under src/:
 * a module that finds a file by its own path (migrations/, web/dist, build-info.json through
 * `new URL("../../..", import.meta.url)`) finds it from dist/ as it does from src/, both being
 * one level below the root. Source maps are written beside the files; Node reads them only when
 * started with --enable-source-maps (stack traces then name the .ts lines).
 *
 *   npx tsx scripts/build-server.ts [--force]
 */
import { readdirSync, statSync } from "node:fs";
import { rename, rm, writeFile } from "node:fs/promises";
import { join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { BUILD_STAMP, buildIsFresh } from "./build-stamp.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const SRC = join(ROOT, "src");
export const SERVER_DIST = join(ROOT, "dist");
const SELF = fileURLToPath(import.meta.url);
/** What the build reads: the sources, the compiler options and the compiler's version. */
const SOURCES = [SRC, join(ROOT, "tsconfig.json"), join(ROOT, "package-lock.json")];

/** True when dist/ is complete and newer than every source (and this script). */
export function serverBuildIsFresh(dist = SERVER_DIST, sources = [SELF, ...SOURCES]): boolean {
  return buildIsFresh(dist, sources);
}

function typeScriptFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true, recursive: true })
    .filter((entry) => entry.isFile() && entry.name.endsWith(".ts") && !entry.name.endsWith(".d.ts"))
    .map((entry) => join(entry.parentPath, entry.name));
}

/**
 * Compiles into a directory of its own and swaps it in: a service starting meanwhile never
 * reads a half-written build.
 */
export async function buildServer(): Promise<void> {
  // Loaded only to build: the freshness check alone stays quick.
  const { build } = await import("esbuild");
  const began = Date.now();
  const out = `${SERVER_DIST}.tmp-${process.pid}`;
  await rm(out, { recursive: true, force: true });
  await build({
    entryPoints: typeScriptFiles(SRC),
    outdir: out,
    outbase: SRC,
    bundle: false,
    platform: "node",
    format: "esm",
    // The Node versions package.json's engines allow.
    target: "node22",
    // Relative to each file (../src/...): still right once dist.tmp-* is renamed to dist.
    sourcemap: "linked",
    logLevel: "warning",
  });
  await writeFile(join(out, BUILD_STAMP), new Date().toISOString());
  // Another start built it meanwhile (two `npm start`s at once): its build is as good, and
  // swapping would pull it from under the server starting from it.
  const builtMeanwhile = () =>
    (statSync(join(SERVER_DIST, BUILD_STAMP), { throwIfNoEntry: false })?.mtimeMs ?? 0) >= began;
  if (builtMeanwhile()) {
    await rm(out, { recursive: true, force: true });
    return;
  }
  const old = `${SERVER_DIST}.old-${process.pid}`;
  await rename(SERVER_DIST, old).catch(() => undefined);
  try {
    await rename(out, SERVER_DIST);
  } catch (error) {
    // Another start swapped its build in between the two renames: as good as this one.
    if (!builtMeanwhile()) throw error;
    await rm(out, { recursive: true, force: true });
  }
  await rm(old, { recursive: true, force: true });
}

/** Builds unless the build is fresh; says which it did. */
export async function ensureServerBuilt(options: { force?: boolean } = {}): Promise<"built" | "fresh"> {
  if (!options.force && serverBuildIsFresh()) return "fresh";
  await buildServer();
  return "built";
}

if (process.argv[1] === SELF) {
  const started = performance.now();
  const result = await ensureServerBuilt({ force: process.argv.includes("--force") });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(
    result === "built" ? `server built in ${seconds} s (${relative(ROOT, SERVER_DIST)})` : "server build is up to date",
  );
}
