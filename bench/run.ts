import { existsSync } from "node:fs";
import { readdir } from "node:fs/promises";
import { fileURLToPath } from "node:url";

/**
 * Runs one benchmark: `npm run bench -- <name>` imports `bench/<name>/index.ts` and awaits its
 * exported `run()`. Figures go to stdout as JSON lines, progress to stderr.
 */
const BENCH_DIR = fileURLToPath(new URL("./", import.meta.url));

interface Benchmark {
  run(args: string[]): Promise<void>;
}

async function available(): Promise<string[]> {
  const entries = await readdir(BENCH_DIR, { withFileTypes: true });
  return entries
    .filter((entry) => entry.isDirectory() && existsSync(new URL(`./${entry.name}/index.ts`, import.meta.url)))
    .map((entry) => entry.name)
    .sort();
}

function isBenchmark(module: unknown): module is Benchmark {
  return typeof module === "object" && module !== null && "run" in module && typeof module.run === "function";
}

async function main(): Promise<void> {
  const [name, ...args] = process.argv.slice(2);
  const names = await available();
  if (name === undefined || !names.includes(name)) {
    if (name !== undefined) console.error(`Unknown benchmark '${name}'.`);
    console.error(`Usage: npm run bench -- <name>\nAvailable benchmarks:\n${names.map((n) => `  ${n}`).join("\n")}`);
    process.exitCode = 2;
    return;
  }
  const module: unknown = await import(`./${name}/index.ts`);
  if (!isBenchmark(module)) throw new Error(`bench/${name}/index.ts does not export a run() function`);
  await module.run(args);
}

main().catch((error: unknown) => {
  console.error(error);
  process.exitCode = 1;
});
