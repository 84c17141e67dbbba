import { randomBytes } from "node:crypto";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { type Config, ConfigError } from "../config.js";
import { SecretsKeyring } from "./sealed-box.js";

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

/**
 * On PostgreSQL every node must share the session-signing secret and the secrets key: a node
 * that generated its own would sign out whoever another node signed in and fail to open what
 * another node sealed. So such a node does not start; the message names what is missing.
 */
export function requireSharedSecrets(config: Config): void {
  if (config.databaseUrl === undefined) return;
  const missing = [
    config.jwtSecret === undefined ? "JWT_SECRET" : undefined,
    config.secretsKey === undefined ? "SECRETS_KEY" : undefined,
  ].filter((name): name is string => name !== undefined);
  if (missing.length === 0) return;
  throw new ConfigError(
    missing.join(" and "),
    `must be set on PostgreSQL, the same on every node (${missing.includes("SECRETS_KEY") ? "SECRETS_KEY: openssl rand -base64 32, written k1:<key>; " : ""}see docs/operations.md)`,
  );
}

export interface NodeSecrets {
  jwtSecret: string;
  /** SECRETS_KEY's keys, opening too what JWT_SECRET sealed before the keyring. */
  keyring: SecretsKeyring;
  /** Where the key was generated, when SECRETS_KEY is unset (the embedded database only). */
  generatedKeyFile?: string;
}

/**
 * The secrets this node signs and seals with: from the environment, else (the embedded database
 * only, see requireSharedSecrets) generated once into DATA_DIR. Call it with the data directory
 * locked, so that two processes never generate two keys.
 */
export async function nodeSecrets(config: Config): Promise<NodeSecrets> {
  requireSharedSecrets(config);
  const jwtSecret = config.jwtSecret ?? (await loadOrCreateSecret(config.dataDir, "jwt-secret"));
  if (config.secretsKey) return { jwtSecret, keyring: config.secretsKey.withLegacy(jwtSecret) };
  const file = resolve(config.dataDir, "secrets-key");
  let text: string;
  try {
    text = (await readFile(file, "utf8")).trim();
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code !== "ENOENT") throw error;
    await mkdir(config.dataDir, { recursive: true });
    text = SecretsKeyring.generate();
    await writeFile(file, `${text}\n`, { mode: 0o600, flag: "wx" });
  }
  let keyring: SecretsKeyring;
  try {
    keyring = SecretsKeyring.parse(text);
  } catch (error) {
    throw new ConfigError("SECRETS_KEY", `is unset and ${file} ${(error as Error).message}`);
  }
  return { jwtSecret, keyring: keyring.withLegacy(jwtSecret), generatedKeyFile: file };
}
