import Bowser from "bowser";
import { isbot } from "isbot";

/** What a user agent (and its client hints) says: families, e.g. `mobile` / `Android` / `Chrome`. */
export interface AgentFacts {
  /** `mobile`, `tablet`, `desktop` or `other` (a TV, a console); null when the agent does not tell. */
  device: string | null;
  os: string | null;
  browser: string | null;
  /** A known crawler, link unfurler, monitor or HTTP tool (isbot's maintained list). */
  bot: boolean;
}

/** The client hints a Chromium browser sends unasked (Sec-CH-UA, -Mobile, -Platform). */
export interface AgentHints {
  brands: string | null;
  mobile: string | null;
  platform: string | null;
}

const MAX_FAMILY = 64;
const DEVICE_TYPES: ReadonlySet<string> = new Set(["mobile", "tablet", "desktop"]);
// Brands a Chromium browser adds so that servers do not match on the list's order or content.
const FILLER_BRAND = /not.?a.?brand|^chromium$/i;

const family = (value: string | undefined): string | null =>
  value === undefined || value === "" ? null : value.slice(0, MAX_FAMILY);

/** `"Chromium";v="126", "Google Chrome";v="126"` as bowser's brand list. */
function brandsOf(header: string): { brand: string; version: string }[] {
  const brands: { brand: string; version: string }[] = [];
  for (const match of header.matchAll(/"([^"]{1,64})"\s*;\s*v\s*=\s*"([^"]{0,32})"/g)) {
    brands.push({ brand: match[1] as string, version: match[2] as string });
  }
  return brands;
}

function hintsOf(hints: AgentHints): Bowser.ClientHints | undefined {
  if (hints.brands === null && hints.mobile === null && hints.platform === null) return undefined;
  const parsed: Bowser.ClientHints = {};
  if (hints.brands !== null) parsed.brands = brandsOf(hints.brands);
  if (hints.mobile !== null) parsed.mobile = hints.mobile.trim() === "?1";
  if (hints.platform !== null) parsed.platform = hints.platform.trim().replace(/^"|"$/g, "").slice(0, MAX_FAMILY);
  return parsed;
}

/** The families of one user agent; the hints, where sent, correct what the agent string hides. */
function parse(userAgent: string, hints: Bowser.ClientHints | undefined): AgentFacts {
  const parser = Bowser.getParser(userAgent, false, hints);
  let device = family(parser.getPlatformType(true));
  let os = family(parser.getOSName());
  let browser = family(parser.getBrowserName());
  // A reduced user agent (Chrome's frozen "Android 10; K") still says its platform and brand in hints.
  if (hints?.mobile === true && device !== "tablet") device = "mobile";
  if (hints?.mobile === false && device === null) device = "desktop";
  if (hints?.platform && hints.platform !== "Unknown") os = family(hints.platform);
  const brand = hints?.brands?.find((b) => !FILLER_BRAND.test(b.brand))?.brand;
  if (browser === null && brand !== undefined) browser = family(brand);
  // Four device types, as the click log filters them: a TV or console is `other`; bowser's own
  // "bot" type is left to the bot check below.
  if (device === "bot") device = null;
  else if (device !== null && !DEVICE_TYPES.has(device)) device = "other";
  return { device, os, browser, bot: isbot(userAgent) };
}

// User agents repeat a lot: each agent (with its hints) is parsed once. Bounded in bytes like the
// user-agent digests of unique clicks, and cleared when full: a parse is cheap to make again.
const parsed = new Map<string, AgentFacts>();
const MAX_CACHE_BYTES = 2 * 1024 * 1024;
// The entry, its slot and the facts object, beyond two bytes a character of the key.
const ENTRY_OVERHEAD_BYTES = 200;
let cacheBytes = 0;

/** The agent cache, for its metrics: estimated bytes and entries. */
export function agentCache(): { bytes: number; entries: number } {
  return { bytes: cacheBytes, entries: parsed.size };
}

/** The facts of a user agent and its client hints; an absent agent tells nothing and is no bot. */
export function agentFacts(userAgent: string | null, hints: AgentHints): AgentFacts {
  if (userAgent === null) return { device: null, os: null, browser: null, bot: false };
  const key =
    hints.brands === null && hints.mobile === null && hints.platform === null
      ? userAgent
      : `${userAgent}\n${hints.brands ?? ""}\n${hints.mobile ?? ""}\n${hints.platform ?? ""}`;
  let facts = parsed.get(key);
  if (facts === undefined) {
    facts = parse(userAgent, hintsOf(hints));
    const bytes = ENTRY_OVERHEAD_BYTES + 2 * key.length;
    if (cacheBytes + bytes > MAX_CACHE_BYTES) {
      parsed.clear();
      cacheBytes = 0;
    }
    parsed.set(key, facts);
    cacheBytes += bytes;
  }
  return facts;
}
