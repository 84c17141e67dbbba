import { randomBytes, randomFillSync } from "node:crypto";

const ALPHABET = "0123456789abcdefghjkmnpqrstvwxyz";

function base32(bytes: Uint8Array): string {
  let out = "";
  let buffer = 0;
  let bits = 0;
  for (const byte of bytes) {
    buffer = (buffer << 8) | byte;
    bits += 8;
    while (bits >= 5) {
      out += ALPHABET[(buffer >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += ALPHABET[(buffer << (5 - bits)) & 31];
  return out;
}

export type IdPrefix =
  | "ten"
  | "usr"
  | "tok"
  | "aud"
  | "run"
  | "req"
  | "node"
  | "iss"
  | "mail"
  | "clk"
  | "cnv"
  | "csc"
  | "pv"
  | "wh"
  | "evt"
  | "att"
  | "msg"
  | "gup"
  | "tsp"
  | "srp"
  | "pbl";

// Random bytes are drawn 4 KiB at a time: one syscall per ~400 ids instead of one per id,
// which matters because every request gets an id.
const POOL = new Uint8Array(4096);
let poolOffset = POOL.length;

function randomInto(target: Uint8Array, at: number, length: number): void {
  if (poolOffset + length > POOL.length) {
    randomFillSync(POOL);
    poolOffset = 0;
  }
  target.set(POOL.subarray(poolOffset, poolOffset + length), at);
  poolOffset += length;
}

/**
 * `prefix_` + 48 bits of milliseconds + 80 random bits in base32: ids sort by creation time,
 * which keeps b-tree inserts local and gives lists a stable tiebreak.
 */
export function newId(prefix: IdPrefix): string {
  const bytes = new Uint8Array(16);
  const time = Date.now();
  for (let i = 5; i >= 0; i--) bytes[5 - i] = Math.floor(time / 2 ** (8 * i)) & 0xff;
  randomInto(bytes, 6, 10);
  return `${prefix}_${base32(bytes)}`;
}

// 80 random bits drawn once per process, then a counter: unique across processes and restarts
// without a clock read, random bytes or a base32 pass per request.
const REQUEST_ID_STEM = `req_${base32(randomBytes(10))}`;
let requestCount = 0;

/**
 * A request id, `req_` + a fixed-length per-process stem + a base-36 counter. Unlike `newId`
 * it does not sort by time; it only has to be unique and cheap, as every request gets one.
 */
export function newRequestId(): string {
  requestCount += 1;
  return REQUEST_ID_STEM + requestCount.toString(36);
}

/** The creation time `newId` wrote into an id, or null when `id` is not one of its ids. */
export function idTime(id: string): Date | null {
  const body = id.slice(id.indexOf("_") + 1);
  if (!/^[0-9a-hjkmnp-tv-z]{26}$/.test(body)) return null;
  // 48 bits of time are the first 9.6 base32 digits: decode 10 and drop the 2 extra bits.
  let value = 0;
  for (let i = 0; i < 10; i++) value = value * 32 + ALPHABET.indexOf(body.charAt(i));
  return new Date(Math.floor(value / 4));
}
