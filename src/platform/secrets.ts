import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** Reads a secret kept in DATA_DIR, creating it (mode 600) on first use. */
export async function loadOrCreateSecret(dataDir: string, name: string): Promise<string> {
  const file = join(dataDir, name);
  try {
    const value = (await readFile(file, "utf8")).trim();
    if (value.length >= 32) return value;
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
  }
  await mkdir(dataDir, { recursive: true });
  const value = randomBytes(48).toString("base64url");
  await writeFile(file, `${value}\n`, { mode: 0o600 });
  return value;
}
