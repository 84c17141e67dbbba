import { readFile } from "node:fs/promises";
import { fileURLToPath } from "node:url";
import { gzip } from "node:zlib";

/**
 * Scalar's reference page script (its standalone bundle, 4.3 MB), gzip-compressed (1.3 MB).
 *
 * @scalar/fastify-api-reference ships that script only as a string literal inside its own module:
 * importing the plugin kept it in memory twice (the module's source and the string, 17 MB of
 * heap, 31 MB resident with the module's code) from the start, whether or not anyone opened the
 * page. Instead the literal is read from the installed package at the first request for it, and
 * only its compressed form is kept (one buffer, 1.3 MB).
 */

const PACKAGE_MODULE = "@scalar/fastify-api-reference";
const START = 'var standalone_default = "';
const END = '";\n//#endregion';

const BACKSLASH = 0x5c;
/** What a one-character escape stands for (`\\n`...); any other character stands for itself. */
const SINGLE: Record<string, string> = { n: "\n", r: "\r", t: "\t", b: "\b", f: "\f", v: "\v", "0": "\0" };
/** `\\u{1F600}`, `\\u0041`, `\\x41`, or a backslash before a line end (a line continuation). */
const ESCAPE = /^(?:u\{([0-9a-fA-F]+)\}|u([0-9a-fA-F]{4})|x([0-9a-fA-F]{2})|(\r\n|\r|\n|\u2028|\u2029)|([\s\S]))/u;

/**
 * The script held in the literal of the package's module, its JavaScript escapes decoded, as
 * UTF-8 bytes. Worked on as bytes, not as a string: the script has characters beyond Latin-1, so
 * as strings the module and the script would be 17 MB of heap more while it is read.
 */
export function extractBundle(moduleSource: Buffer): Buffer {
  const start = moduleSource.indexOf(START);
  const end = start < 0 ? -1 : moduleSource.indexOf(END, start + START.length);
  if (start < 0 || end < 0) {
    throw new Error(`${PACKAGE_MODULE}: its reference script was not found where this version was read from`);
  }
  // Every escape is longer than what it stands for: the script fits in the literal's length.
  const out = Buffer.allocUnsafe(end - start);
  let written = 0;
  let plainFrom = start + START.length;
  let i = plainFrom;
  let pendingHigh: number | undefined;
  const flushHigh = () => {
    if (pendingHigh !== undefined) written += out.write(String.fromCharCode(pendingHigh), written);
    pendingHigh = undefined;
  };
  while (i < end) {
    const next = moduleSource.indexOf(BACKSLASH, i);
    if (next < 0 || next >= end) break;
    if (next > plainFrom) flushHigh();
    written += moduleSource.copy(out, written, plainFrom, next);
    // At most `u{10FFFF}` and a few bytes of a multi-byte character follow a backslash.
    const after = moduleSource.toString("utf8", next + 1, Math.min(end, next + 13));
    const match = ESCAPE.exec(after);
    if (match === null) throw new Error(`${PACKAGE_MODULE}: a broken escape in its reference script`);
    const [whole, point, unit, byte, , other] = match;
    if (unit !== undefined) {
      // A character beyond the first plane may come as two \u escapes (a surrogate pair).
      const code = Number.parseInt(unit, 16);
      if (pendingHigh !== undefined && code >= 0xdc00 && code <= 0xdfff) {
        written += out.write(String.fromCharCode(pendingHigh, code), written);
        pendingHigh = undefined;
      } else {
        flushHigh();
        if (code >= 0xd800 && code <= 0xdbff) pendingHigh = code;
        else written += out.write(String.fromCharCode(code), written);
      }
    } else {
      flushHigh();
      let text = "";
      if (point !== undefined) text = String.fromCodePoint(Number.parseInt(point, 16));
      else if (byte !== undefined) text = String.fromCharCode(Number.parseInt(byte, 16));
      else if (other !== undefined) text = SINGLE[other] ?? other;
      written += out.write(text, written);
    }
    i = next + 1 + Buffer.byteLength(whole);
    plainFrom = i;
  }
  flushHigh();
  written += moduleSource.copy(out, written, plainFrom, end);
  return out.subarray(0, written);
}

async function load(): Promise<Buffer> {
  const file = fileURLToPath(import.meta.resolve(PACKAGE_MODULE));
  const script = extractBundle(await readFile(file));
  return new Promise((resolve, reject) => {
    gzip(script, { level: 6 }, (error, result) => (error ? reject(error) : resolve(result)));
  });
}

let bundle: Promise<Buffer> | undefined;

/** The compressed script, read and compressed once (about 0.4 s of CPU), then kept. */
export function scalarBundleGzip(): Promise<Buffer> {
  bundle ??= load().catch((error: unknown) => {
    // A later request tries again rather than failing for the life of the process.
    bundle = undefined;
    throw error;
  });
  return bundle;
}
