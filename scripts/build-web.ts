/**
 * Builds the dashboard (web/) into web/dist when its build is missing or older than its sources,
 * and skips it otherwise; `npm start` runs it first (prestart) and the test suite's global setup
 * too. Every asset is also written brotli- and gzip-compressed, so the service sends compressed
 * files without compressing on each request (src/features/dashboard/).
 *
 *   npx tsx scripts/build-web.ts [--force]
 */
import { readdir, readFile, rename, rm, writeFile } from "node:fs/promises";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { brotliCompressSync, constants, gzipSync } from "node:zlib";
import { BUILD_STAMP, buildIsFresh } from "./build-stamp.js";

const ROOT = fileURLToPath(new URL("..", import.meta.url));
const WEB = join(ROOT, "web");
export const WEB_DIST = join(WEB, "dist");
/** What the build reads: the app, its page, and the tools that shape it. */
const SOURCES = [join(WEB, "src"), join(WEB, "public"), join(WEB, "index.html"), join(ROOT, "package-lock.json")];
const SELF = fileURLToPath(import.meta.url);
const COMPRESSIBLE = /\.(js|css|html|svg|json|txt|map)$/;

/** True when the build (web/dist) is complete and newer than every source (and this script). */
export function webBuildIsFresh(dist = WEB_DIST, sources = [SELF, ...SOURCES]): boolean {
  return buildIsFresh(dist, sources);
}

async function compressAll(dir: string): Promise<void> {
  for (const entry of await readdir(dir, { withFileTypes: true, recursive: true })) {
    if (!entry.isFile() || !COMPRESSIBLE.test(entry.name)) continue;
    const file = join(entry.parentPath, entry.name);
    const body = await readFile(file);
    await writeFile(
      `${file}.br`,
      brotliCompressSync(body, {
        params: { [constants.BROTLI_PARAM_QUALITY]: 11, [constants.BROTLI_PARAM_SIZE_HINT]: body.length },
      }),
    );
    await writeFile(`${file}.gz`, gzipSync(body, { level: 9 }));
  }
}

/**
 * Builds into a directory of its own and swaps it in: a service (or a parallel test run) reading
 * web/dist never sees a half-written build.
 */
export async function buildWeb(): Promise<void> {
  // Loaded only to build: the freshness check alone stays quick.
  const [{ build }, { default: react }] = await Promise.all([import("vite"), import("@vitejs/plugin-react")]);
  const out = `${WEB_DIST}.tmp-${process.pid}`;
  // Vite keeps a NODE_ENV it finds (vitest sets `test`), and React and the router then bundle
  // their development builds: always the production build, the caller's value restored after.
  const callerNodeEnv = process.env.NODE_ENV;
  process.env.NODE_ENV = "production";
  try {
    await build({
      root: WEB,
      configFile: false,
      logLevel: "warn",
      mode: "production",
      plugins: [react()],
      build: {
        outDir: out,
        emptyOutDir: true,
        target: "es2022",
        sourcemap: false,
        // The compressed sizes are measured by the dashboard test, not on every build.
        reportCompressedSize: false,
        // ECharts, loaded apart from the first screen, is one chunk of about 530 kB (150 kB brotli).
        chunkSizeWarningLimit: 600,
      },
    });
  } finally {
    if (callerNodeEnv === undefined) delete process.env.NODE_ENV;
    else process.env.NODE_ENV = callerNodeEnv;
  }
  await compressAll(out);
  await writeFile(join(out, BUILD_STAMP), new Date().toISOString());
  const old = `${WEB_DIST}.old-${process.pid}`;
  await rename(WEB_DIST, old).catch(() => undefined);
  await rename(out, WEB_DIST);
  await rm(old, { recursive: true, force: true });
}

/** Builds unless the build is fresh; says which it did. */
export async function ensureWebBuilt(options: { force?: boolean } = {}): Promise<"built" | "fresh"> {
  if (!options.force && webBuildIsFresh()) return "fresh";
  await buildWeb();
  return "built";
}

if (process.argv[1] === SELF) {
  const started = performance.now();
  const result = await ensureWebBuilt({ force: process.argv.includes("--force") });
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(result === "built" ? `dashboard built in ${seconds} s (web/dist)` : "dashboard build is up to date");
}
