import { mkdir, mkdtemp, rm, utimes, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { BUILD_STAMP } from "../scripts/build-stamp.js";
import { webBuildIsFresh } from "../scripts/build-web.js";

// `npm start` (prestart) and the test setup build the dashboard only when its build is missing,
// unfinished or older than a source: checked here on a directory of its own.
describe("dashboard build freshness", () => {
  let dir: string;
  let dist: string;
  let sources: string[];
  const at = (iso: string) => new Date(iso);

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "tp-web-build-"));
    dist = join(dir, "dist");
    await mkdir(join(dir, "src", "pages"), { recursive: true });
    await writeFile(join(dir, "src", "pages", "Overview.tsx"), "export {};");
    await writeFile(join(dir, "index.html"), "<!doctype html>");
    sources = [join(dir, "src"), join(dir, "index.html"), join(dir, "missing-is-fine")];
    for (const path of [join(dir, "src", "pages", "Overview.tsx"), join(dir, "src", "pages"), join(dir, "src")]) {
      await utimes(path, at("2026-01-01T00:00:00Z"), at("2026-01-01T00:00:00Z"));
    }
    await utimes(join(dir, "index.html"), at("2026-01-01T00:00:00Z"), at("2026-01-01T00:00:00Z"));
  });
  afterAll(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it("builds when there is no build, or one that did not finish", async () => {
    expect(webBuildIsFresh(dist, sources)).toBe(false);
    await mkdir(join(dist, "assets"), { recursive: true });
    await writeFile(join(dist, "index.html"), "<!doctype html>");
    expect(webBuildIsFresh(dist, sources)).toBe(false);
  });

  it("skips a complete build newer than every source", async () => {
    await writeFile(join(dist, BUILD_STAMP), "done");
    await utimes(join(dist, BUILD_STAMP), at("2026-02-01T00:00:00Z"), at("2026-02-01T00:00:00Z"));
    expect(webBuildIsFresh(dist, sources)).toBe(true);
  });

  it("builds again when a source deep in the tree changed after the build", async () => {
    const page = join(dir, "src", "pages", "Overview.tsx");
    await utimes(page, at("2026-03-01T00:00:00Z"), at("2026-03-01T00:00:00Z"));
    expect(webBuildIsFresh(dist, sources)).toBe(false);
    await utimes(join(dist, BUILD_STAMP), at("2026-04-01T00:00:00Z"), at("2026-04-01T00:00:00Z"));
    expect(webBuildIsFresh(dist, sources)).toBe(true);
  });

  it("sees the real build as fresh after the test setup built it", () => {
    expect(webBuildIsFresh()).toBe(true);
  });
});
