/**
 * The placeholder engine of outgoing webhook URLs (docs/outgoing-webhooks.md):
 * `${name}` and `{{name}}` insert the URL-encoded value, `{{{name}}}` the raw value. Names are
 * case-insensitive and each is a plain name (never a dotted path). A value the conversion does
 * not have renders as an empty string.
 */

/** Every name a real conversion can fill (lower-cased keys map to the canonical spelling). */
export const LIVE_PLACEHOLDERS = [
  "clickId",
  "externalClickId",
  "eventName",
  "eventValue",
  "currencyCode",
  "eventTime",
  "eventTimeStamp",
  "conversionId",
  "conversionType",
  "conversionStatus",
  "attributionSource",
  "parameterA",
  "parameterB",
  "gclid",
  "fbclid",
  "msclkid",
  "obclid",
  "clickTime",
  "clickTimeStamp",
  "country",
  "trafficSource",
  "trafficSourceId",
  "account",
  "accountId",
  "brand",
  "brandId",
  "program",
  "programId",
  "link",
  "linkId",
  "tracker",
  "trackerId",
  "clientUserAgent",
] as const;

/** Filled only by Simulate; they render empty in live deliveries. */
export const SIMULATE_ONLY_PLACEHOLDERS = [
  "medium",
  "campaign",
  "term",
  "content",
  "creative",
  "location",
  "locationPath",
  "documentTitle",
] as const;

export type PlaceholderName = (typeof LIVE_PLACEHOLDERS)[number] | (typeof SIMULATE_ONLY_PLACEHOLDERS)[number];

const CANONICAL = new Map<string, PlaceholderName>(
  [...LIVE_PLACEHOLDERS, ...SIMULATE_ONLY_PLACEHOLDERS].map((name) => [name.toLowerCase(), name]),
);

/** Values by canonical name; absent or null renders empty. */
export type PlaceholderValues = Partial<Record<PlaceholderName, string | null>>;

// Longest form first, so `{{{x}}}` is not read as `{` + `{{x}}` + `}`.
const TOKEN = /\{\{\{([^{}]*)\}\}\}|\{\{([^{}]*)\}\}|\$\{([^{}]*)\}/g;
const PLAIN_NAME = /^[A-Za-z][A-Za-z0-9_]*$/;

/** One placeholder as written in a template. */
export interface Token {
  /** The text as written, e.g. `${clickId}`. */
  text: string;
  /** The name inside, trimmed. */
  inner: string;
  raw: boolean;
  /** The canonical name, when the inner text is a known plain name. */
  name: string | null;
  problem: "not_plain" | "unknown" | null;
}

export function tokens(template: string, vocabulary: Vocabulary = WEBHOOK_VOCABULARY): Token[] {
  const out: Token[] = [];
  for (const match of template.matchAll(TOKEN)) {
    const [text, rawInner, encodedInner, dollarInner] = match;
    const inner = (rawInner ?? encodedInner ?? dollarInner ?? "").trim();
    const plain = PLAIN_NAME.test(inner);
    const name = plain ? (vocabulary.names.get(inner.toLowerCase()) ?? null) : null;
    out.push({
      text,
      inner,
      raw: rawInner !== undefined,
      name,
      problem: !plain ? "not_plain" : name === null ? "unknown" : null,
    });
  }
  return out;
}

// A lone UTF-16 surrogate (a user agent cut inside an emoji) would make encodeURIComponent throw.
const LONE_SURROGATE = /[\uD800-\uDBFF](?![\uDC00-\uDFFF])|(?<![\uD800-\uDBFF])[\uDC00-\uDFFF]/g;

function wellFormed(value: string): string {
  return value.replace(LONE_SURROGATE, "\uFFFD");
}

/**
 * Renders a template. A placeholder that is not a known plain name renders empty too; callers
 * that must refuse such templates check `tokens` first.
 */
export function render(template: string, values: Values, vocabulary: Vocabulary = WEBHOOK_VOCABULARY): string {
  return template.replace(TOKEN, (_text, rawInner?: string, encodedInner?: string, dollarInner?: string) => {
    const inner = (rawInner ?? encodedInner ?? dollarInner ?? "").trim();
    const name = vocabulary.names.get(inner.toLowerCase());
    const value = name === undefined ? null : (values[name] ?? null);
    if (value === null) return "";
    return rawInner !== undefined ? value : encodeURIComponent(wellFormed(value));
  });
}

/** A reason a template cannot be saved, naming the placeholder at fault. */
export class PlaceholderError extends Error {
  constructor(
    message: string,
    readonly placeholder: string | null,
  ) {
    super(message);
    this.name = "PlaceholderError";
  }
}

/** Sample values: every placeholder filled, so the rendered URL shows what a delivery would look like. */
export const SAMPLE_VALUES: Record<PlaceholderName, string> = {
  clickId: "clk_06gzyy77kggck3hytbtrc2xp48",
  externalClickId: "ext-123",
  eventName: "Deposit",
  eventValue: "25.50",
  currencyCode: "EUR",
  eventTime: "2026-11-21T10:00:00.000Z",
  eventTimeStamp: "1795255200",
  conversionId: "cnv_06gzyy77kggck3hytbtrc2xp48",
  conversionType: "Deposit",
  conversionStatus: "approved",
  attributionSource: "google",
  parameterA: "sub1",
  parameterB: "sub2",
  gclid: "EAIaIQobChMI",
  fbclid: "IwAR2",
  msclkid: "5c1a2b",
  obclid: "ob-77",
  clickTime: "2026-11-21T09:30:00.000Z",
  clickTimeStamp: "1795253400",
  country: "GB",
  trafficSource: "Google Ads",
  trafficSourceId: "1",
  account: "Main account",
  accountId: "1",
  brand: "Brand",
  brandId: "1",
  program: "Program",
  programId: "1",
  link: "Landing link",
  linkId: "1",
  tracker: "spring-promo",
  trackerId: "1",
  clientUserAgent: "Mozilla/5.0",
  medium: "cpc",
  campaign: "spring",
  term: "casino bonus",
  content: "banner-a",
  creative: "creative-1",
  location: "https://brand.example/welcome",
  locationPath: "/welcome",
  documentTitle: "Welcome",
};

const SIMULATE_ONLY = new Set<string>(SIMULATE_ONLY_PLACEHOLDERS);
const LIVE_SAMPLE_VALUES: PlaceholderValues = Object.fromEntries(
  Object.entries(SAMPLE_VALUES).filter(([name]) => !SIMULATE_ONLY.has(name)),
);

/** Values by name, for templates of any vocabulary. */
type Values = Readonly<Record<string, string | null | undefined>>;

/**
 * The names a template may use and the sample values save-time validation renders it with.
 * Outgoing webhooks use the names above; another sender (traffic-source postbacks) adds its own.
 */
export interface Vocabulary {
  /** Lower-cased name -> its canonical spelling. */
  names: ReadonlyMap<string, string>;
  /** Sample values of a live delivery. */
  live: Values;
  /** Sample values the caller is shown. */
  sample: Values;
}

const WEBHOOK_VOCABULARY: Vocabulary = { names: CANONICAL, live: LIVE_SAMPLE_VALUES, sample: SAMPLE_VALUES };

/** The live names (no simulate-only ones) plus `extra`: canonical name -> sample value. */
export function liveVocabulary(extra: Record<string, string>): Vocabulary {
  const names = new Map([...LIVE_PLACEHOLDERS, ...Object.keys(extra)].map((name) => [name.toLowerCase(), name]));
  const live = { ...LIVE_SAMPLE_VALUES, ...extra };
  return { names, live, sample: live };
}

/**
 * Save-time validation: every placeholder a known plain name, and the template rendered with
 * sample values an absolute http or https URL, also with every placeholder empty (a value the
 * conversion does not have). Returns the rendered sample.
 */
export function validateTemplate(template: string, vocabulary: Vocabulary = WEBHOOK_VOCABULARY): string {
  // biome-ignore lint/suspicious/noControlCharactersInRegex: finding them is the point
  if (/[\u0000-\u001f\u007f]/.test(template)) {
    throw new PlaceholderError("URL must not contain control characters (line breaks, tabs)", null);
  }
  // What is left once the placeholders are taken out must not open or close one.
  const leftover = /\$\{|\{\{|\}\}/.exec(template.replace(TOKEN, ""));
  if (leftover) {
    const near = template.slice(Math.max(0, template.indexOf(leftover[0])), template.indexOf(leftover[0]) + 24);
    throw new PlaceholderError(`Placeholder near '${near}' is not closed or is nested`, near);
  }
  const found = tokens(template, vocabulary);
  for (const token of found) {
    if (token.problem === "not_plain") {
      throw new PlaceholderError(
        `Placeholder '${token.text}' is not a plain name (write one name, e.g. \${clickId})`,
        token.text,
      );
    }
    if (token.problem === "unknown") throw new PlaceholderError(`Unknown placeholder '${token.text}'`, token.text);
  }
  // Checked as a live delivery would render it: simulate-only names empty, so a URL that needs
  // one of them to be a web address is refused.
  const live = render(template, vocabulary.live, vocabulary);
  const problem = webAddressProblem(live);
  if (problem !== null) {
    // A value in the scheme or port of a URL written with `://` breaks the sample too: name the
    // placeholder at fault (without `://`, or when the URL is no address even with every value
    // empty, the URL's shape is what is wrong; a raw one is named all the same).
    if (template.includes("://")) {
      originProblem(template, vocabulary, webAddressProblem(render(template, {}, vocabulary)) !== null);
    }
    throw new PlaceholderError(problem, null);
  }
  emptyValueProblem(template, found, vocabulary);
  originProblem(template, vocabulary, false);
  // The sample shown to the caller fills the simulate-only names too.
  return render(template, vocabulary.sample, vocabulary);
}

/**
 * A value the conversion does not have renders empty, and a URL that is then no web address gets
 * its webhook suspended at send time: refuse it at save instead. Names the placeholder whose
 * emptiness alone breaks the URL when there is one; otherwise the URL breaks only with several
 * empty at once, and the rendering with all of them empty is quoted.
 */
function emptyValueProblem(template: string, found: Token[], vocabulary: Vocabulary): void {
  const allEmpty = render(template, {}, vocabulary);
  if (webAddressProblem(allEmpty) === null) return;
  for (const token of found) {
    if (token.name === null) continue;
    const rendered = render(template, { ...vocabulary.live, [token.name]: null }, vocabulary);
    if (webAddressProblem(rendered) !== null) {
      throw new PlaceholderError(
        `URL does not resolve to an absolute http or https address when '${token.text}' is empty, as it is for a conversion without that value: '${rendered}'`,
        token.text,
      );
    }
  }
  throw new PlaceholderError(
    `URL does not resolve to an absolute http or https address when its placeholders are empty, as they are for a conversion without those values: '${allEmpty}'`,
    null,
  );
}

/**
 * Why a rendered URL is not an absolute http or https address, or null when it is. Written out
 * in full (scheme, //, host): the URL parser's leniency (`http:x`, `https:///x`, backslashes)
 * is not accepted.
 */
export function webAddressProblem(url: string): string | null {
  const scheme = /^([a-z][a-z0-9+.-]*):/i.exec(url)?.[1]?.toLowerCase();
  if (scheme !== undefined && scheme !== "http" && scheme !== "https")
    return `URL must be http or https, not ${scheme}`;
  const refused = `URL does not resolve to an absolute http or https address: '${url}'`;
  if (!/^https?:\/\/[^/\\?#\s]+/i.test(url)) return refused;
  try {
    new URL(url);
  } catch {
    return refused;
  }
  return null;
}

/**
 * What stands in the way of sending a rendered template that was saved before save-time
 * validation: a reason deliveries must stop, or the placeholders that render blank. A URL that is
 * no web address only because of this conversion's values is not the template's fault: it does
 * not stop the webhook (the attempt refuses that one delivery, see `renderUrl`).
 */
export function sendTimeProblems(template: string, rendered: string): { stop: string | null; blank: string[] } {
  const leftover = /\$\{|\{\{|\}\}/.exec(template.replace(TOKEN, ""));
  if (leftover) return { stop: `A placeholder near '${leftover[0]}' is not closed or is nested`, blank: [] };
  const found = tokens(template);
  const notPlain = found.find((t) => t.problem === "not_plain");
  if (notPlain) return { stop: `Placeholder '${notPlain.text}' is not a plain name`, blank: [] };
  let stop = webAddressProblem(rendered);
  if (stop !== null && templateSound(template)) stop = null;
  return { stop, blank: stop === null ? found.filter((t) => t.problem === "unknown").map((t) => t.text) : [] };
}

/** The template renders to a web address both with sample values and with every value empty. */
function templateSound(template: string, vocabulary: Vocabulary = WEBHOOK_VOCABULARY): boolean {
  return (
    webAddressProblem(render(template, vocabulary.live, vocabulary)) === null &&
    webAddressProblem(render(template, {}, vocabulary)) === null
  );
}

/**
 * Where a part of a URL template stands: `origin` is the scheme, user info, host and port (a
 * value there decides where the delivery goes).
 */
export type UrlRegion = "origin" | "path" | "query" | "fragment";

/** A template cut into literal text and placeholders, each with the region it stands in. */
export interface TemplatePart {
  text: string;
  token: Token | null;
  region: UrlRegion;
}

/**
 * Cuts a template into parts by region. Regions are decided by the template's literal text only
 * (`scheme:`, the slashes, then the first `/`, `\`, `?` or `#`), never by a value: `renderUrl`
 * keeps raw values from adding those delimiters where they would move to another region.
 */
export function templateParts(template: string, vocabulary: Vocabulary = WEBHOOK_VOCABULARY): TemplatePart[] {
  const parts: TemplatePart[] = [];
  let state: "scheme" | "slashes" | "authority" | "path" | "query" | "fragment" = "scheme";
  const region = (): UrlRegion =>
    state === "scheme" || state === "slashes" || state === "authority" ? "origin" : state;
  const literal = (text: string) => {
    let start = 0;
    for (let i = 0; i < text.length; i++) {
      const c = text[i];
      let next = state;
      if (state === "scheme") {
        if (c === ":") next = "slashes";
      } else if (state === "slashes") {
        if (c !== "/" && c !== "\\") {
          state = "authority";
          next = c === "?" ? "query" : c === "#" ? "fragment" : "authority";
        }
      } else if (state === "authority") {
        if (c === "/" || c === "\\") next = "path";
        else if (c === "?") next = "query";
        else if (c === "#") next = "fragment";
      } else if (state === "path") {
        if (c === "?") next = "query";
        else if (c === "#") next = "fragment";
      } else if (state === "query" && c === "#") next = "fragment";
      if (next !== state) {
        if (i > start) parts.push({ text: text.slice(start, i), token: null, region: region() });
        start = i;
        state = next;
      }
    }
    if (text.length > start) parts.push({ text: text.slice(start), token: null, region: region() });
  };
  let last = 0;
  const found = tokens(template, vocabulary);
  let index = 0;
  for (const match of template.matchAll(TOKEN)) {
    literal(template.slice(last, match.index));
    parts.push({ text: match[0], token: found[index++] as Token, region: region() });
    last = match.index + match[0].length;
  }
  literal(template.slice(last));
  return parts;
}

// What stands for a value in another syntax (`{x}`, `<x>`, `[x]`, `%7Bx%7D` ...): the engine does
// not fill it, but it has no place in an origin either, and refusing it keeps the rule simple:
// the scheme, user info, host and port are written out in full. `[` `]` only around an IPv6 host.
const BRACKET = /[{}<>[\]]/;
const IPV6_HOST = /(^|@)\[[0-9a-f:.]*\](?=(:[0-9]*)?$)/i;

function percentDecoded(text: string): string {
  return text.replace(/%([0-9a-f]{2})/gi, (_all, hex: string) => String.fromCharCode(Number.parseInt(hex, 16)));
}

/**
 * No placeholder may stand in the scheme, user info, host or port: a value there decides where
 * the delivery goes (`http://v${parameterA}:43010/` with `pa=m` would go to host `vm`, and a raw
 * `@other-host/x?` turns the host into user info). The origin is fixed when the URL is saved; at
 * send time `renderUrl` refuses a URL whose origin differs from the template's. `rawOnly` checks
 * raw placeholders only (used when the URL is no web address anyway, to name the one at fault).
 */
function originProblem(template: string, vocabulary: Vocabulary, rawOnly: boolean): void {
  let literal = "";
  for (const part of templateParts(template, vocabulary)) {
    if (part.region !== "origin") continue;
    if (part.token === null) {
      literal += part.text;
      continue;
    }
    if (part.token.raw) {
      const encoded = `\${${part.token.inner}}`;
      throw new PlaceholderError(
        `Raw placeholder '${part.token.text}' is not allowed in the URL's scheme, user info, host or port: a value there could send the delivery to another address. Use ${encoded} to insert it URL-encoded in the path or query`,
        part.token.text,
      );
    }
    if (!rawOnly) {
      throw new PlaceholderError(
        `Placeholder '${part.token.text}' is not allowed in the URL's scheme, user info, host or port: a value there would decide where the delivery goes. Write the address out in full and put values in the path or query`,
        part.token.text,
      );
    }
  }
  if (rawOnly) return;
  const authority = literal.replace(/^[a-z][a-z0-9+.-]*:[/\\]*/i, "");
  const bracket = BRACKET.exec(percentDecoded(authority).replace(IPV6_HOST, "$1"));
  if (bracket !== null) {
    throw new PlaceholderError(
      `The URL's scheme, user info, host or port must not contain '${bracket[0]}' (written or percent-encoded): it looks like a placeholder, and no placeholder may stand there. Write the address out in full`,
      null,
    );
  }
}

/** Deliveries refused at send time because a value would steer them (attempt error types). */
export type SteeringErrorType = "url_origin_changed" | "url_path_changed";
const STEERING_ERROR_TYPES: ReadonlySet<string | null> = new Set<SteeringErrorType>([
  "url_origin_changed",
  "url_path_changed",
]);

/** True for the error types of a delivery refused because a value would have steered its URL. */
export const isSteeringError = (errorType: string | null): boolean => STEERING_ERROR_TYPES.has(errorType);

export interface RenderedUrl {
  url: string;
  /** Why this delivery must not be sent: a value would change where it goes. */
  steered: { errorType: SteeringErrorType; message: string } | null;
}

// biome-ignore lint/suspicious/noControlCharactersInRegex: escaping them is the point
const CONTROL = /[\u0000-\u001f\u007f]/g;
const percent = (c: string) => `%${c.charCodeAt(0).toString(16).toUpperCase().padStart(2, "0")}`;

/**
 * A raw value as it may stand in its region: it keeps its own escapes and slashes, but cannot
 * open a region of its own. In the path `?` and `#` are escaped (no query or fragment of its
 * own), in the query `&` and `#` (no parameter or fragment of its own: `x&payout=1#` stays one
 * value). Control characters are escaped everywhere: the URL parser drops tabs and line breaks,
 * which would let `.\n.` become `..`.
 */
function neutralised(value: string, region: UrlRegion): string {
  const escaped = value.replace(CONTROL, percent);
  if (region === "path") return escaped.replace(/[?#]/g, percent);
  if (region === "query") return escaped.replace(/[&#]/g, percent);
  return escaped;
}

// `.`, `..` and their percent-encoded spellings: URL parsers resolve every one of them.
const DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

interface Address {
  protocol: string;
  username: string;
  password: string;
  host: string;
}

function addressOf(url: string): Address | null {
  if (webAddressProblem(url) !== null) return null;
  const { protocol, username, password, host } = new URL(url);
  return { protocol, username, password, host };
}

/**
 * Renders a delivery URL to send. Like `render`, but a value cannot steer the delivery: raw
 * values are neutralised for their region, and the result is refused (`steered`) when its
 * scheme, user info, host or port differ from the template's own (its literal text there, every
 * placeholder left out: none may stand there since save-time validation refuses it, and one in a
 * URL saved before that rule only sends when its value is empty), or when a value makes a `.` or
 * `..` path segment (which the parser would resolve, climbing the path; `%2E%2E` included, so no
 * escape can keep it).
 */
export function renderUrl(template: string, values: Values, vocabulary: Vocabulary = WEBHOOK_VOCABULARY): RenderedUrl {
  let url = "";
  // The template's origin: its literal text, whatever the values.
  let origin = "";
  // The path as rendered, with which of its characters came from a value.
  let path = "";
  let fromValue: boolean[] = [];
  for (const part of templateParts(template, vocabulary)) {
    let text = part.text;
    const token = part.token;
    if (token !== null) {
      const value = token.name === null ? null : (values[token.name] ?? null);
      text = value === null ? "" : token.raw ? neutralised(value, part.region) : encodeURIComponent(wellFormed(value));
    }
    url += text;
    if (part.region === "origin" && token === null) origin += text;
    if (part.region === "path") {
      path += text;
      fromValue = fromValue.concat(Array.from({ length: text.length }, () => token !== null));
    }
  }
  return { url, steered: originChange(template, url, origin, vocabulary) ?? pathClimb(path, fromValue) };
}

function originChange(template: string, url: string, origin: string, vocabulary: Vocabulary): RenderedUrl["steered"] {
  const actual = addressOf(url);
  if (actual === null) {
    // A template that is no web address whatever the values is the template's fault (invalid_url).
    if (!templateSound(template, vocabulary)) return null;
    return {
      errorType: "url_origin_changed",
      message: "A value would turn the URL's scheme, user info, host or port into no web address; nothing was sent",
    };
  }
  const expected = addressOf(`${origin}/`);
  if (
    expected !== null &&
    expected.protocol === actual.protocol &&
    expected.username === actual.username &&
    expected.password === actual.password &&
    expected.host === actual.host
  ) {
    return null;
  }
  // Hosts only: the user info may hold the receiver's credentials.
  const instead = expected === null ? "" : ` instead of ${expected.protocol}//${expected.host}`;
  return {
    errorType: "url_origin_changed",
    message: `A value would send the delivery to ${actual.protocol}//${actual.host}${instead}; nothing was sent`,
  };
}

function pathClimb(path: string, fromValue: boolean[]): RenderedUrl["steered"] {
  let start = 0;
  for (let i = 0; i <= path.length; i++) {
    if (i < path.length && path[i] !== "/" && path[i] !== "\\") continue;
    const segment = path.slice(start, i);
    if (DOT_SEGMENT.test(segment) && fromValue.slice(start, i).some(Boolean)) {
      return {
        errorType: "url_path_changed",
        message: `A value would make the path segment '${segment}', which climbs the URL's path; nothing was sent`,
      };
    }
    start = i + 1;
  }
  return null;
}
