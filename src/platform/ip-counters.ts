import { randomInt } from "node:crypto";

/**
 * Per-address counters in fixed-window form (a window starts at an address's first hit and lasts
 * `windowMs`), held in a table of fixed size: three typed arrays allocated once, 16 bytes a slot,
 * whatever the traffic. No string is kept and nothing is allocated per call, so a check costs a
 * hash of the address and at most `PROBES` array reads: cheap enough for the click redirect.
 *
 * An address is hashed (FNV-1a with a per-table random seed, so nobody can aim two addresses at
 * one slot) and looked for in `PROBES` neighbouring slots. A new address takes a free or expired
 * slot there; when all are live it takes the one with the smallest count (an address far over its
 * limit is the last to be forgotten; `evictions` counts these). Two addresses whose 32-bit hashes
 * are equal share a counter: about one pair per 2^32 live addresses, and all it does is count them
 * together.
 *
 * IPv6 addresses count per /64, the block one subscriber is given: otherwise one client could
 * rotate through its 2^64 addresses and never be counted twice.
 */
export class IpCounters {
  readonly #keys: Uint32Array;
  readonly #counts: Uint32Array;
  /** When each slot's window ends (ms since the epoch); 0: empty. */
  readonly #ends: Float64Array;
  readonly #mask: number;
  readonly #seed = randomInt(0, 2 ** 32) >>> 0;
  /** Live counters dropped to make room for a new address (the table was full there). */
  evictions = 0;

  /** `slots` is rounded up to a power of two. */
  constructor(slots: number) {
    let size = 1;
    while (size < slots) size *= 2;
    this.#keys = new Uint32Array(size);
    this.#counts = new Uint32Array(size);
    this.#ends = new Float64Array(size);
    this.#mask = size - 1;
  }

  /** Bytes the table holds, fixed at construction. */
  get bytes(): number {
    return this.#keys.byteLength + this.#counts.byteLength + this.#ends.byteLength;
  }

  /** Counts `cost` hits of `ip` at `nowMs` and returns its count in the window (this hit included). */
  hit(ip: string, nowMs: number, windowMs: number, cost = 1): number {
    const key = addressHash(ip, this.#seed);
    const keys = this.#keys;
    const counts = this.#counts;
    const ends = this.#ends;
    let free = -1;
    let victim = -1;
    let victimCount = Number.POSITIVE_INFINITY;
    for (let i = 0; i < PROBES; i++) {
      const slot = (key + i) & this.#mask;
      const end = ends[slot] as number;
      if (end <= nowMs) {
        if (free < 0) free = slot;
      } else if (keys[slot] === key) {
        const count = Math.min((counts[slot] as number) + cost, MAX_COUNT);
        counts[slot] = count;
        return count;
      } else if ((counts[slot] as number) < victimCount) {
        victim = slot;
        victimCount = counts[slot] as number;
      }
    }
    const slot = free >= 0 ? free : victim;
    if (free < 0) this.evictions += 1;
    keys[slot] = key;
    counts[slot] = Math.min(cost, MAX_COUNT);
    ends[slot] = nowMs + windowMs;
    return counts[slot] as number;
  }

  /** The slot of `ip`'s live window, or -1; read it with countAt and endAt. */
  find(ip: string, nowMs: number): number {
    const key = addressHash(ip, this.#seed);
    for (let i = 0; i < PROBES; i++) {
      const slot = (key + i) & this.#mask;
      if (this.#keys[slot] === key && (this.#ends[slot] as number) > nowMs) return slot;
    }
    return -1;
  }

  countAt(slot: number): number {
    return this.#counts[slot] as number;
  }

  /** When the window of the slot ends, in ms since the epoch. */
  endAt(slot: number): number {
    return this.#ends[slot] as number;
  }

  /**
   * Raises `ip`'s count to at least `count`, its window ending at `endsAt` (a count kept
   * elsewhere, such as the shared Redis one, is brought into this table).
   */
  raise(ip: string, count: number, nowMs: number, endsAt: number): void {
    let slot = this.find(ip, nowMs);
    if (slot < 0) {
      this.hit(ip, nowMs, Math.max(1, endsAt - nowMs), 0);
      slot = this.find(ip, nowMs);
      if (slot < 0) return;
    }
    this.#counts[slot] = Math.min(Math.max(this.#counts[slot] as number, count), MAX_COUNT);
    if (endsAt > (this.#ends[slot] as number)) this.#ends[slot] = endsAt;
  }
}

const PROBES = 4;
const MAX_COUNT = 0xffffffff;
const FNV_PRIME = 0x01000193;

// The eight 16-bit groups of an IPv6 address being parsed; one per process, never allocated again.
const groups = new Uint16Array(8);

/**
 * The 32-bit hash of an address: an IPv4 address (or any text that is not plain IPv6) as it is
 * written, an IPv6 address by its first four groups (its /64), however it is written (`::`
 * anywhere, leading zeros, any case, a zone). Allocates nothing.
 */
export function addressHash(ip: string, seed: number): number {
  let hash = (0x811c9dc5 ^ seed) >>> 0;
  if (!isPlainIpv6(ip)) {
    for (let i = 0; i < ip.length; i++) hash = Math.imul(hash ^ ip.charCodeAt(i), FNV_PRIME);
    return hash >>> 0;
  }
  // A marker so that an IPv6 /64 never hashes like an IPv4 text.
  hash = Math.imul(hash ^ 0x36, FNV_PRIME);
  for (let g = 0; g < 4; g++) {
    const value = groups[g] as number;
    hash = Math.imul(hash ^ (value >>> 8), FNV_PRIME);
    hash = Math.imul(hash ^ (value & 0xff), FNV_PRIME);
  }
  return hash >>> 0;
}

/** The key of an address as text: an IPv6 address becomes its /64 (`2001:db8:0:1::/64`), anything else is kept. */
export function addressKey(ip: string): string {
  if (!isPlainIpv6(ip)) return ip;
  return `${[0, 1, 2, 3].map((g) => (groups[g] as number).toString(16)).join(":")}::/64`;
}

/**
 * True when `ip` is IPv6 without an embedded IPv4 part (`::ffff:1.2.3.4` is judged as text),
 * its groups parsed into `groups`. A zone (`%eth0`) ends the address.
 */
function isPlainIpv6(ip: string): boolean {
  if (ip.indexOf(":") < 0 || ip.indexOf(".") >= 0) return false;
  let end = ip.indexOf("%");
  if (end < 0) end = ip.length;
  const gap = ip.indexOf("::");
  if (gap >= end || (gap >= 0 && ip.indexOf("::", gap + 1) >= 0 && ip.indexOf("::", gap + 1) < end)) return false;
  groups.fill(0);
  const head = readGroups(ip, 0, gap < 0 ? end : gap, 0);
  if (head < 0) return false;
  if (gap < 0) return head === 8;
  const tail = readGroups(ip, gap + 2, end, -1);
  return tail >= 0 && head + tail <= 7;
}

/**
 * Reads the ':'-separated hex groups of ip[from, to) into `groups` from index `at` (-1: so that
 * the last one lands in the last group); returns how many, or -1 when they are not groups.
 */
function readGroups(ip: string, from: number, to: number, at: number): number {
  if (from === to) return 0;
  let count = 1;
  for (let i = from; i < to; i++) if (ip.charCodeAt(i) === 58) count += 1;
  const first = at < 0 ? 8 - count : at;
  if (first < 0 || first + count > 8) return -1;
  let g = first;
  let value = 0;
  let digits = 0;
  for (let i = from; i <= to; i++) {
    const c = i === to ? 58 : ip.charCodeAt(i);
    if (c === 58) {
      if (digits === 0) return -1;
      groups[g++] = value;
      value = 0;
      digits = 0;
      continue;
    }
    const hex = c >= 48 && c <= 57 ? c - 48 : c >= 97 && c <= 102 ? c - 87 : c >= 65 && c <= 70 ? c - 55 : -1;
    if (hex < 0 || digits === 4) return -1;
    value = value * 16 + hex;
    digits += 1;
  }
  return count;
}
