import { createHash, randomBytes, scrypt, timingSafeEqual } from "node:crypto";
import { promisify } from "node:util";

const scryptAsync = promisify(scrypt) as (
  password: string,
  salt: Buffer,
  keylen: number,
  options: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

export function sha256Hex(value: string): string {
  return createHash("sha256").update(value).digest("hex");
}

/** Compares two secrets in constant time, whatever their lengths. */
export function secretsEqual(given: string, expected: string): boolean {
  const a = createHash("sha256").update(given).digest();
  const b = createHash("sha256").update(expected).digest();
  return timingSafeEqual(a, b);
}

/** Base64 of 32 random bytes: the raw form of API keys and other bearer secrets. */
export function randomSecret(): string {
  return randomBytes(32).toString("base64");
}

/**
 * Password hashing: scrypt at OWASP's current minimum (N=2^17, r=8, p=1), about 128 MiB and a
 * few hundred milliseconds per hash, run on libuv's thread pool, never on the event loop. The
 * parameters are stored with each hash (`scrypt$N$r$p$salt$hash`), so a hash made with older
 * ones still verifies, and `passwordNeedsRehash` tells the sign-in to upgrade it.
 */
export const PASSWORD_SCRYPT = { N: 2 ** 17, r: 8, p: 1, keylen: 32 } as const;

// Stored parameters are read back from the database: anything past these bounds is refused
// rather than run, so a bad row cannot make one sign-in allocate gigabytes.
const MAX_N = 2 ** 20;
const MAX_R = 32;
const MAX_P = 16;
const MAX_MEMORY_BYTES = 512 * 1024 * 1024;

interface StoredHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

function parseStored(stored: string): StoredHash | null {
  const [scheme, n, r, p, salt, hash, extra] = stored.split("$");
  if (scheme !== "scrypt" || !n || !r || !p || !salt || !hash || extra !== undefined) return null;
  const N = Number(n);
  const R = Number(r);
  const P = Number(p);
  const powerOfTwo = Number.isInteger(N) && N > 1 && (N & (N - 1)) === 0;
  if (!powerOfTwo || N > MAX_N || !Number.isInteger(R) || R < 1 || R > MAX_R) return null;
  if (!Number.isInteger(P) || P < 1 || P > MAX_P || 128 * N * R > MAX_MEMORY_BYTES) return null;
  return { N, r: R, p: P, salt: Buffer.from(salt, "base64"), hash: Buffer.from(hash, "base64") };
}

/** scrypt needs 128 * N * r bytes (plus a little); Node refuses above `maxmem`, 32 MiB by default. */
function maxmemFor(N: number, r: number, p: number): number {
  return 128 * N * r + 128 * r * p + 1024 * 1024;
}

export async function hashPassword(password: string): Promise<string> {
  const { N, r, p, keylen } = PASSWORD_SCRYPT;
  const salt = randomBytes(16);
  const hash = await scryptAsync(password, salt, keylen, { N, r, p, maxmem: maxmemFor(N, r, p) });
  return `scrypt$${N}$${r}$${p}$${salt.toString("base64")}$${hash.toString("base64")}`;
}

export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  const parsed = parseStored(stored);
  if (!parsed || parsed.hash.length === 0) return false;
  const { N, r, p, salt, hash } = parsed;
  const actual = await scryptAsync(password, salt, hash.length, { N, r, p, maxmem: maxmemFor(N, r, p) });
  return timingSafeEqual(actual, hash);
}

/** True when a stored hash was made with other parameters than today's: rehash it at the next sign-in. */
export function passwordNeedsRehash(stored: string): boolean {
  const parsed = parseStored(stored);
  if (!parsed) return true;
  const { N, r, p, keylen } = PASSWORD_SCRYPT;
  return parsed.N !== N || parsed.r !== r || parsed.p !== p || parsed.hash.length !== keylen;
}
