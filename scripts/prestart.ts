/**
 * What `npm start` runs before the server (prestart), in one process: each tsx process more
 * would cost a start about 0.4 s. Records the build's identity (build-info.ts), then builds the
 * dashboard (web/dist) and the server (dist/) where their sources changed since the last build.
 *
 *   node --import tsx scripts/prestart.ts
 */
import { ensureServerBuilt } from "./build-server.js";
import { ensureWebBuilt } from "./build-web.js";

await import("./build-info.js");
const started = performance.now();
const [web, server] = await Promise.all([ensureWebBuilt(), ensureServerBuilt()]);
if (web === "built" || server === "built") {
  const built = [web === "built" ? "dashboard (web/dist)" : "", server === "built" ? "server (dist)" : ""];
  const seconds = ((performance.now() - started) / 1000).toFixed(1);
  console.log(`built ${built.filter(Boolean).join(" and ")} in ${seconds} s`);
}
