import { fileURLToPath } from "node:url";
import { lockDirectory } from "../../src/platform/dir-lock.js";

// A process that takes a directory lock and holds it until SIGTERM, for the lock's tests:
// `node --import tsx lock-holder.ts <directory> <heartbeatMs>`. It prints `locked` once it
// holds the lock, or the refusal and exits 1. On SIGTERM it exits without releasing, so the
// lock goes only through the exit hook, as after an uncaught error.

export const LOCK_HOLDER_SCRIPT = fileURLToPath(import.meta.url);

if (process.argv[1] === LOCK_HOLDER_SCRIPT) {
  const [directory = "", heartbeatMs = "5000"] = process.argv.slice(2);
  try {
    lockDirectory(directory, { heartbeatMs: Number(heartbeatMs) });
  } catch (error) {
    console.error((error as Error).message);
    process.exit(1);
  }
  // The handler before the word: a test may send SIGTERM the moment it reads `locked`.
  process.on("SIGTERM", () => process.exit(0));
  console.log("locked");
  setInterval(() => {}, 1 << 30);
}
