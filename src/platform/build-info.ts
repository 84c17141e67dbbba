import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import type { BuildOverrides } from "../config.js";

export interface BuildInfo {
  version: string;
  buildNumber: string;
  buildTime: string;
  commitSha: string;
}

const ROOT = new URL("../../", import.meta.url);

function readJson(file: string): Record<string, unknown> | null {
  try {
    return JSON.parse(readFileSync(new URL(file, ROOT), "utf8")) as Record<string, unknown>;
  } catch {
    return null;
  }
}

function gitSha(): string | null {
  try {
    return execFileSync("git", ["rev-parse", "HEAD"], { cwd: ROOT, stdio: ["ignore", "pipe", "ignore"] })
      .toString()
      .trim();
  } catch {
    return null;
  }
}

function field(source: Record<string, unknown> | null, key: string): string | undefined {
  const value = source?.[key];
  return typeof value === "string" && value !== "" ? value : undefined;
}

/**
 * The deployed build: `build-info.json` written by `npm run build-info` (run before start),
 * else the package version and the checkout's commit; each field can be overridden by env.
 */
export function loadBuildInfo(overrides: BuildOverrides, startedAt: Date): BuildInfo {
  const built = readJson("build-info.json");
  const pkg = readJson("package.json");
  return {
    version: overrides.version ?? field(built, "version") ?? field(pkg, "version") ?? "0.0.0",
    buildNumber: overrides.buildNumber ?? field(built, "buildNumber") ?? "local",
    buildTime: overrides.buildTime ?? field(built, "buildTime") ?? startedAt.toISOString(),
    commitSha: overrides.commitSha ?? field(built, "commitSha") ?? gitSha() ?? "unknown",
  };
}
