// Records the build's identity for GET /active-version; run by `npm start` and in CI.
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";

const pkg = JSON.parse(readFileSync("package.json", "utf8")) as { version: string };
let commitSha = "unknown";
try {
  commitSha = execFileSync("git", ["rev-parse", "HEAD"], { stdio: ["ignore", "pipe", "ignore"] })
    .toString()
    .trim();
} catch {
  // Not a git checkout (a tarball install): the commit stays unknown unless COMMIT_SHA is set.
}
const info = {
  version: pkg.version,
  buildNumber: process.env.BUILD_NUMBER ?? "local",
  buildTime: new Date().toISOString(),
  commitSha: process.env.COMMIT_SHA ?? commitSha,
};
writeFileSync("build-info.json", `${JSON.stringify(info, null, 2)}\n`);
console.log(`build-info.json: ${info.version} #${info.buildNumber} ${info.commitSha.slice(0, 12)}`);
