import { execFile } from "node:child_process";
import { mkdir, mkdtemp, readdir, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { dirname, join, resolve } from "node:path";
import { promisify } from "node:util";
import { afterAll, beforeAll, describe, expect, inject, it } from "vitest";

// The import rules of src/ (docs/architecture.md, "Code layout rules"): no run-time import
// cycle, src/platform imports no feature, a feature uses another only through its index.ts, and
// every feature's index.ts and service module loads first in a fresh process. None of this touches the database: it runs on one project only.

const run = promisify(execFile);
const root = resolve(import.meta.dirname, "..");
const depcruise = join(root, "node_modules", ".bin", "depcruise");
const config = join(root, ".dependency-cruiser.cjs");
const onPglite = inject("dbKind") === "pglite";

/** Runs the cruiser as `npm run check` does, in `cwd`; its exit code and report. */
async function cruise(cwd: string): Promise<{ code: number; output: string }> {
  try {
    const { stdout } = await run(depcruise, ["src", "--config", config, "--output-type", "err"], { cwd });
    return { code: 0, output: stdout };
  } catch (error) {
    const failed = error as { code?: number; stdout?: string; stderr?: string };
    return { code: failed.code ?? -1, output: `${failed.stdout ?? ""}${failed.stderr ?? ""}` };
  }
}

describe.runIf(onPglite)("the import graph", () => {
  it("has no run-time cycle in src/, no feature imported by src/platform, no feature's deep import", async () => {
    const { code, output } = await cruise(root);
    expect(output).toContain("no dependency violations found");
    expect(code).toBe(0);
  });

  describe("the check on a fixture", () => {
    let fixture: string;
    const files: Record<string, string> = {
      "tsconfig.json": JSON.stringify({
        compilerOptions: { module: "NodeNext", moduleResolution: "NodeNext", strict: true, verbatimModuleSyntax: true },
      }),
      // A run-time cycle through two barrels, as the one that made a service crash when loaded first.
      "src/features/alpha/index.ts": 'import { beta } from "../beta/index.js";\nexport const alpha = () => beta;\n',
      "src/features/beta/index.ts": 'import { alpha } from "../alpha/index.js";\nexport const beta = () => alpha;\n',
      // A cycle made of type-only imports: erased at run time, so allowed.
      "src/features/gamma/index.ts":
        'import type { Delta } from "../delta/index.js";\nexport type Gamma = { d?: Delta };\n',
      "src/features/delta/index.ts":
        'import type { Gamma } from "../gamma/index.js";\nexport type Delta = { g?: Gamma };\n',
      // The platform reaching up into a feature.
      "src/platform/clock.ts": 'import { alpha } from "../features/alpha/index.js";\nexport const clock = alpha;\n',
      // A feature reaching into another's own file, past its index.ts; within a feature it may.
      "src/features/epsilon/index.ts": 'import { inner } from "../zeta/inner.js";\nexport const epsilon = inner;\n',
      "src/features/zeta/inner.ts": "export const inner = 1;\n",
      "src/features/zeta/index.ts": 'import { inner } from "./inner.js";\nexport const zeta = inner;\n',
    };

    beforeAll(async () => {
      fixture = await mkdtemp(join(tmpdir(), "tp-import-graph-"));
      for (const [path, text] of Object.entries(files)) {
        await mkdir(dirname(join(fixture, path)), { recursive: true });
        await writeFile(join(fixture, path), text);
      }
    });
    afterAll(() => rm(fixture, { recursive: true, force: true }));

    it("fails on a run-time cycle, the platform importing a feature and a feature's deep import, naming each; type-only cycles pass", async () => {
      const { code, output } = await cruise(fixture);
      expect(code).not.toBe(0);
      // The cruiser names a cycle once, from whichever of its modules it meets first.
      expect(output).toMatch(/no-runtime-cycle: src\/features\/(alpha|beta)\/index\.ts/);
      expect(output).toMatch(/platform-imports-no-feature: src\/platform\/clock\.ts/);
      expect(output).toContain(
        "feature-imports-features-through-index: src/features/epsilon/index.ts → src/features/zeta/inner.ts",
      );
      expect(output).not.toContain("feature-imports-features-through-index: src/features/zeta");
      expect(output).not.toContain("gamma");
      expect(output).not.toContain("delta");
    });
  });

  it("loads every feature's index.ts and service module first, each in a fresh process", async () => {
    const modules: string[] = [];
    const features = join(root, "src", "features");
    for (const feature of await readdir(features)) {
      for (const file of await readdir(join(features, feature))) {
        if (file === "index.ts" || file === "service.ts" || file.endsWith("-service.ts")) {
          modules.push(`src/features/${feature}/${file}`);
        }
      }
    }
    expect(modules).toContain("src/features/issues/service.ts");
    expect(modules).toContain("src/features/outgoing-webhooks/index.ts");
    // Two at a time: the machine's cores are shared with the rest of the suite.
    const failures: string[] = [];
    for (let i = 0; i < modules.length; i += 2) {
      await Promise.all(
        modules.slice(i, i + 2).map(async (module) => {
          try {
            await run(
              process.execPath,
              ["--import", "tsx", "--input-type=module", "-e", `await import("./${module}");`],
              {
                cwd: root,
              },
            );
          } catch (error) {
            failures.push(`${module}: ${(error as { stderr?: string }).stderr ?? String(error)}`);
          }
        }),
      );
    }
    expect(failures).toEqual([]);
  }, 120_000);
});
