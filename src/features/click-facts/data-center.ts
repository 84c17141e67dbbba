import { closeSync, openSync, readSync } from "node:fs";
import { createRequire } from "node:module";
import { ipv4Number, ipv6Prefix, plainAddress } from "./address.js";
import { isHostingNetwork } from "./hosting-networks.js";

/**
 * Address ranges of data-center networks, from the ASN database of @ip-location-db/asn
 * (RouteViews, the five RIRs and DB-IP's IP to ASN Lite, CC BY 4.0): each range's autonomous
 * system and its organization's name. Which systems count as data centers: hosting-networks.ts.
 * Only those ranges are kept, merged, as sorted arrays searched by bisection.
 */
const require = createRequire(import.meta.url);
const IPV4_FILE = require.resolve("@ip-location-db/asn/asn-ipv4-num.csv");
const IPV6_FILE = require.resolve("@ip-location-db/asn/asn-ipv6-num.csv");
const TWO_64 = 1n << 64n;

interface Ranges<T> {
  starts: T;
  ends: T;
}

let v4: Ranges<Uint32Array> | null = null;
let v6: Ranges<BigUint64Array> | null = null;

const COMMA = 44;
const NEWLINE = 10;
const ZERO = 48;

/** The decimal digits of bytes[from, to) as a number (exact below 2^53: IPv4 numbers and ASNs). */
function decimal(bytes: Buffer, from: number, to: number): number {
  let value = 0;
  for (let i = from; i < to; i++) value = value * 10 + ((bytes[i] as number) - ZERO);
  return value;
}

// The files are read a chunk at a time into one buffer: read whole (32 MB) they would stay in the
// process's memory until a garbage collection that an idle service may not run for a long time.
const CHUNK_BYTES = 1024 * 1024;

/** Calls `onLine` with each line's byte range [from, to) in `bytes`, valid during the call only. */
function forEachLine(file: string, onLine: (bytes: Buffer, from: number, to: number) => void): void {
  const fd = openSync(file, "r");
  const chunk = Buffer.allocUnsafe(CHUNK_BYTES);
  let carried = 0;
  try {
    for (;;) {
      const read = readSync(fd, chunk, carried, CHUNK_BYTES - carried, null);
      const length = carried + read;
      let at = 0;
      for (;;) {
        const next = chunk.indexOf(NEWLINE, at);
        if (next === -1 || next >= length) break;
        onLine(chunk, at, next);
        at = next + 1;
      }
      if (read === 0) {
        if (at < length) onLine(chunk, at, length);
        return;
      }
      if (at === 0 && length === CHUNK_BYTES) throw new Error(`${file}: a line longer than ${CHUNK_BYTES} bytes`);
      // The partial last line moves to the buffer's start, completed by the next read.
      chunk.copy(chunk, 0, at, length);
      carried = length - at;
    }
  } finally {
    closeSync(fd);
  }
}

/**
 * Rows `start,end,asn,organization` (the organization quoted when it holds a comma) whose
 * system is a hosting network, as byte ranges of their start and end, in file order (the file is
 * sorted).
 */
function hostingRows(file: string, each: (bytes: Buffer, start: number, comma: number, end: number) => void): void {
  const decided = new Map<number, boolean>();
  forEachLine(file, (bytes, at, next) => {
    const first = bytes.indexOf(COMMA, at);
    const second = first === -1 || first > next ? -1 : bytes.indexOf(COMMA, first + 1);
    const third = second === -1 || second > next ? -1 : bytes.indexOf(COMMA, second + 1);
    if (third === -1 || third >= next) return;
    const asn = decimal(bytes, second + 1, third);
    let hosting = decided.get(asn);
    if (hosting === undefined) {
      const raw = bytes.toString("utf8", third + 1, next).trim();
      hosting = isHostingNetwork(asn, raw.startsWith('"') ? raw.slice(1, -1).replaceAll('""', '"') : raw);
      decided.set(asn, hosting);
    }
    if (hosting) each(bytes, at, first, second);
  });
}

function loadV4(): Ranges<Uint32Array> {
  const starts: number[] = [];
  const ends: number[] = [];
  hostingRows(IPV4_FILE, (bytes, at, comma, end) => {
    const s = decimal(bytes, at, comma);
    const e = decimal(bytes, comma + 1, end);
    const last = ends.length - 1;
    // Adjacent ranges of hosting networks merge: fewer entries, the same answers.
    if (last >= 0 && (ends[last] as number) + 1 >= s) ends[last] = Math.max(ends[last] as number, e);
    else {
      starts.push(s);
      ends.push(e);
    }
  });
  return { starts: Uint32Array.from(starts), ends: Uint32Array.from(ends) };
}

/**
 * IPv6 ranges by their first 64 bits: routed IPv6 prefixes are at most /48 long, so a range
 * never splits a /64 and the prefix alone decides.
 */
function loadV6(): Ranges<BigUint64Array> {
  const starts: bigint[] = [];
  const ends: bigint[] = [];
  hostingRows(IPV6_FILE, (bytes, at, comma, end) => {
    const s = BigInt(bytes.toString("latin1", at, comma)) / TWO_64;
    const e = BigInt(bytes.toString("latin1", comma + 1, end)) / TWO_64;
    const last = ends.length - 1;
    if (last >= 0 && (ends[last] as bigint) + 1n >= s) {
      if (e > (ends[last] as bigint)) ends[last] = e;
    } else {
      starts.push(s);
      ends.push(e);
    }
  });
  return { starts: BigUint64Array.from(starts), ends: BigUint64Array.from(ends) };
}

/** Loads the ranges now (once per process), so that no click waits for them. */
export function loadDataCenters(): { ipv4Ranges: number; ipv6Ranges: number } {
  v4 ??= loadV4();
  v6 ??= loadV6();
  return { ipv4Ranges: v4.starts.length, ipv6Ranges: v6.starts.length };
}

/** Index of the last start <= value, or -1. */
function lastAtOrBelow<T extends number | bigint>(starts: ArrayLike<T>, value: T): number {
  let low = 0;
  let high = starts.length - 1;
  let found = -1;
  while (low <= high) {
    const mid = (low + high) >>> 1;
    if ((starts[mid] as T) <= value) {
      found = mid;
      low = mid + 1;
    } else high = mid - 1;
  }
  return found;
}

/** True when the address belongs to a data-center network. */
export function isDataCenterAddress(ip: string): boolean {
  const address = plainAddress(ip);
  if (address === null) return false;
  loadDataCenters();
  if (address.includes(":")) {
    const ranges = v6 as Ranges<BigUint64Array>;
    const prefix = ipv6Prefix(address);
    const i = lastAtOrBelow(ranges.starts, prefix);
    return i !== -1 && prefix <= (ranges.ends[i] as bigint);
  }
  const ranges = v4 as Ranges<Uint32Array>;
  const value = ipv4Number(address);
  const i = lastAtOrBelow(ranges.starts, value);
  return i !== -1 && value <= (ranges.ends[i] as number);
}
