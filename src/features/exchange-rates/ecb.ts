/**
 * The European Central Bank's euro reference rates files (eurofxref-daily.xml, -hist-90d.xml,
 * -hist.xml): fetched with a time and byte bound, and read by a small strict parser. The format:
 *
 *   <gesmes:Envelope ...>...<Cube><Cube time='2026-11-27'><Cube currency='USD' rate='1.0412'/>...
 *   </Cube>...</Cube></gesmes:Envelope>
 *
 * Only `Cube` elements are read: the root one (no attributes), one per day (`time`) and one per
 * rate (`currency`, `rate`) inside a day. Anything else about them (a rate outside a day, a day in
 * a day, another attribute, a bad date, code or number) makes the whole file refused, so a
 * changed or broken file never stores half-understood rates.
 */
import type { RateRow } from "./service.js";

/** Why a file could not be fetched or read; its message names the host only, never the URL. */
export class RatesFileError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "RatesFileError";
  }
}

/** A day's rates beyond this many currencies is not an ECB file (ISO 4217 has about 300 codes). */
const MAX_RATES_PER_DAY = 500;
/** Rates are numeric(30, 10): at most 20 digits before the point; a rate must stay above 0 at 10 decimals. */
const RATE = /^\d{1,20}(?:\.\d{1,20})?$/;
const SMALLEST_RATE = 1e-10;
const DAY = /^\d{4}-\d{2}-\d{2}$/;
const CODE = /^[A-Z]{3}$/;
// A `Cube` start or empty element (its attribute text), or a `Cube` end tag.
const CUBE_TAG = /<Cube(\s[^<>]*?)?\s*(\/?)>|<\/Cube\s*>/g;
const ATTRIBUTE = /\s*([A-Za-z_][\w.-]*)\s*=\s*(?:"([^"<>]*)"|'([^'<>]*)')\s*/y;
const ENVELOPE = /<(?:[A-Za-z_][\w.-]*:)?Envelope[\s>]/;

function attributes(text: string | undefined): Map<string, string> {
  const found = new Map<string, string>();
  if (text === undefined) return found;
  ATTRIBUTE.lastIndex = 0;
  let at = 0;
  while (at < text.length) {
    ATTRIBUTE.lastIndex = at;
    const match = ATTRIBUTE.exec(text);
    if (!match) {
      if (text.slice(at).trim() === "") break;
      throw new RatesFileError(`a Cube element has unreadable attributes: '${text.slice(0, 80)}'`);
    }
    const [, name, double, single] = match;
    if (name === undefined || found.has(name)) throw new RatesFileError(`a Cube element repeats an attribute`);
    found.set(name, double ?? single ?? "");
    at = ATTRIBUTE.lastIndex;
  }
  return found;
}

function realDay(value: string): boolean {
  if (!DAY.test(value)) return false;
  const parsed = new Date(`${value}T00:00:00.000Z`);
  return !Number.isNaN(parsed.getTime()) && parsed.toISOString().slice(0, 10) === value && value >= "1999-01-01";
}

/**
 * The rates of an ECB reference rates file, ordered by day then as listed: strict (see above),
 * and at least one rate. Throws RatesFileError naming what is wrong.
 */
export function parseEcbRates(text: string): RateRow[] {
  if (!ENVELOPE.test(text)) throw new RatesFileError("not an ECB reference rates file (no Envelope element)");
  const days = new Map<string, RateRow[]>();
  let day: string | null = null;
  let codes = new Set<string>();
  let rootOpen = false;
  for (const match of text.matchAll(CUBE_TAG)) {
    const [tag, attributeText, selfClosing] = match;
    if (tag.startsWith("</")) {
      if (day !== null) day = null;
      else if (rootOpen) rootOpen = false;
      else throw new RatesFileError("a Cube end tag closes nothing");
      continue;
    }
    const attrs = attributes(attributeText);
    const time = attrs.get("time");
    const currency = attrs.get("currency");
    const rate = attrs.get("rate");
    if (attrs.size === 0) {
      if (rootOpen || day !== null) throw new RatesFileError("a Cube without attributes inside another");
      if (selfClosing !== "/") rootOpen = true;
    } else if (time !== undefined && attrs.size === 1) {
      if (day !== null) throw new RatesFileError(`the day ${time} is inside the day ${day}`);
      if (!realDay(time)) throw new RatesFileError(`'${time.slice(0, 40)}' is not a date (YYYY-MM-DD, 1999 or later)`);
      if (days.has(time)) throw new RatesFileError(`the day ${time} is listed twice`);
      days.set(time, []);
      codes = new Set();
      if (selfClosing !== "/") day = time;
    } else if (currency !== undefined && rate !== undefined && attrs.size === 2) {
      if (day === null) throw new RatesFileError(`the rate of ${currency.slice(0, 10)} is outside a day`);
      if (!CODE.test(currency) || currency === "EUR") {
        throw new RatesFileError(`'${currency.slice(0, 10)}' on ${day} is not a currency code other than EUR`);
      }
      const value = Number(rate);
      if (!RATE.test(rate) || !(value >= SMALLEST_RATE) || !Number.isFinite(value)) {
        throw new RatesFileError(`the rate of ${currency} on ${day} is not a positive decimal: '${rate.slice(0, 40)}'`);
      }
      if (codes.has(currency)) throw new RatesFileError(`${currency} is listed twice on ${day}`);
      codes.add(currency);
      const rows = days.get(day) ?? [];
      if (rows.length >= MAX_RATES_PER_DAY) throw new RatesFileError(`${day} has over ${MAX_RATES_PER_DAY} rates`);
      rows.push({ currency, day, rate });
      days.set(day, rows);
    } else {
      throw new RatesFileError(`a Cube element with attributes ${[...attrs.keys()].join(", ")} is not understood`);
    }
  }
  if (day !== null || rootOpen) throw new RatesFileError("the file ends inside a Cube element");
  const rows = [...days.keys()].sort().flatMap((d) => days.get(d) ?? []);
  if (rows.length === 0) throw new RatesFileError("the file holds no rate");
  return rows;
}

/**
 * The body of `url` as text, at most `maxBytes` of it, within `timeoutMs` for the whole answer.
 * A failure throws RatesFileError naming the host (never the path or query, which may hold a key).
 */
export async function fetchRatesFile(url: string, options: { maxBytes: number; timeoutMs: number }): Promise<string> {
  const host = new URL(url).host;
  const fail = (reason: string) => new RatesFileError(`reference rates from ${host}: ${reason}`);
  try {
    const response = await fetch(url, {
      headers: { accept: "application/xml, text/xml" },
      signal: AbortSignal.timeout(options.timeoutMs),
    });
    if (!response.ok) {
      await response.body?.cancel().catch(() => undefined);
      throw fail(`HTTP ${response.status}`);
    }
    const declared = Number(response.headers.get("content-length") ?? Number.NaN);
    if (declared > options.maxBytes) {
      await response.body?.cancel().catch(() => undefined);
      throw fail(`the answer is over ${options.maxBytes} bytes`);
    }
    if (!response.body) return "";
    const reader = response.body.getReader();
    const chunks: Uint8Array[] = [];
    let size = 0;
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      size += value.length;
      if (size > options.maxBytes) {
        await reader.cancel().catch(() => undefined);
        throw fail(`the answer is over ${options.maxBytes} bytes`);
      }
      chunks.push(value);
    }
    return Buffer.concat(chunks).toString("utf8");
  } catch (error) {
    if (error instanceof RatesFileError) throw error;
    if (error instanceof Error && (error.name === "TimeoutError" || error.name === "AbortError")) {
      throw fail(`no whole answer within ${options.timeoutMs / 1000} s`);
    }
    // fetch's own error says "fetch failed"; its cause's code (ECONNREFUSED, ENOTFOUND) says why,
    // or its message when it has no code (never the URL: the message of a code is not shown).
    const cause = error instanceof Error ? error.cause : undefined;
    const why =
      cause instanceof Error
        ? typeof (cause as { code?: unknown }).code === "string"
          ? String((cause as { code?: unknown }).code)
          : cause.message.slice(0, 100)
        : error instanceof Error
          ? error.name
          : "error";
    throw fail(`the request failed (${why})`);
  }
}

/** A file's rates, fetched and parsed; a parse failure names the host too. */
export async function readRatesFile(url: string, options: { maxBytes: number; timeoutMs: number }): Promise<RateRow[]> {
  const text = await fetchRatesFile(url, options);
  try {
    return parseEcbRates(text);
  } catch (error) {
    if (error instanceof RatesFileError) {
      throw new RatesFileError(`reference rates from ${new URL(url).host}: ${error.message}`);
    }
    throw error;
  }
}
