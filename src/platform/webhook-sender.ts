import type { LookupAddress } from "node:dns";
import { lookup } from "node:dns/promises";
import { BlockList, isIP } from "node:net";
import { Agent, request } from "undici";

export type ErrorType =
  | "timeout"
  | "connection_refused"
  | "dns"
  | "tls"
  | "http_status"
  | "invalid_url"
  | "blocked_address"
  /** A click value would send the delivery to another scheme, user info, host or port (not sent). */
  | "url_origin_changed"
  /** A click value would make a `.`/`..` path segment that climbs the URL's path (not sent). */
  | "url_path_changed";

export interface SendResult {
  ok: boolean;
  response: { status: number; headers: Record<string, string>; body: string } | null;
  errorType: ErrorType | null;
  error: string | null;
  durationMs: number;
}

const MAX_BODY_BYTES = 4096;

// Private, loopback, link-local, CGNAT, multicast, reserved and documentation ranges: a receiver
// URL may not reach the service's own network.
const BLOCKED = new BlockList();
for (const [network, prefix] of [
  ["0.0.0.0", 8],
  ["10.0.0.0", 8],
  ["100.64.0.0", 10],
  ["127.0.0.0", 8],
  ["169.254.0.0", 16],
  ["172.16.0.0", 12],
  ["192.0.0.0", 24],
  ["192.0.2.0", 24],
  ["192.168.0.0", 16],
  ["198.18.0.0", 15],
  ["198.51.100.0", 24],
  ["203.0.113.0", 24],
  ["224.0.0.0", 4],
  ["240.0.0.0", 4],
] as const) {
  BLOCKED.addSubnet(network, prefix, "ipv4");
}

/**
 * IPv6 ranges refused whatever follows: unique-local, link-local, site-local, multicast,
 * documentation, discard, and every form that embeds an IPv4 address and leads to it through a
 * translator or tunnel (IPv4-compatible `::a.b.c.d`, SIIT `::ffff:0:a.b.c.d`, NAT64 well-known and
 * local-use prefixes, 6to4, Teredo), since the embedded address may be a private one. Node's
 * BlockList reads some of these prefixes as IPv4-mapped, so they are matched on the 128-bit value.
 */
const BLOCKED_V6: [string, number][] = [
  ["::", 96],
  ["::ffff:0:0:0", 96],
  ["64:ff9b::", 96],
  ["64:ff9b:1::", 48],
  ["100::", 64],
  ["2001::", 32],
  ["2001:db8::", 32],
  ["2002::", 16],
  ["fc00::", 7],
  ["fe80::", 10],
  ["fec0::", 10],
  ["ff00::", 8],
];

/** An IPv6 address as a 128-bit number (zone id dropped), or null if it is none. */
export function ipv6Value(address: string): bigint | null {
  const bare = address.replace(/%.*$/, "");
  if (isIP(bare) !== 6) return null;
  let text = bare;
  // A trailing dotted IPv4 becomes its two 16-bit groups.
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = "", tail] = text.split("::");
  const groups = (part: string) => (part === "" ? [] : part.split(":"));
  const left = groups(head);
  const right = tail === undefined ? [] : groups(tail);
  const all = tail === undefined ? left : [...left, ...Array(8 - left.length - right.length).fill("0"), ...right];
  let value = 0n;
  for (const group of all) value = (value << 16n) | BigInt(Number.parseInt(group, 16));
  return value;
}

const V6_RANGES = BLOCKED_V6.map(([network, prefix]) => {
  const shift = BigInt(128 - prefix);
  return { network: (ipv6Value(network) as bigint) >> shift, shift };
});

/** True when an address (IPv4 or IPv6) is in a blocked range; an IPv4-mapped one is judged as its IPv4. */
export function isBlockedAddress(address: string): boolean {
  const family = isIP(address);
  if (family === 4) return BLOCKED.check(address, "ipv4");
  const value = ipv6Value(address);
  if (value === null) return true;
  if (value >> 32n === 0xffffn) {
    const v4 = Number(value & 0xffffffffn);
    return BLOCKED.check([v4 >>> 24, (v4 >>> 16) & 255, (v4 >>> 8) & 255, v4 & 255].join("."), "ipv4");
  }
  return V6_RANGES.some((range) => value >> range.shift === range.network);
}

/** Hosts and CIDRs exempt from the block (WEBHOOK_ALLOWED_HOSTS). */
export class AddressPolicy {
  private readonly hosts = new Set<string>();
  private readonly allowed = new BlockList();

  constructor(entries: readonly string[]) {
    for (const entry of entries) {
      const [address, bits] = entry.split("/");
      const family = isIP(address ?? "");
      if (family === 0) this.hosts.add(entry.toLowerCase());
      else if (bits === undefined) this.allowed.addAddress(address as string, family === 4 ? "ipv4" : "ipv6");
      else this.allowed.addSubnet(address as string, Number(bits), family === 4 ? "ipv4" : "ipv6");
    }
  }

  /** True when `host` itself (a name, or an address within an allowed CIDR) is on the allow-list. */
  exempts(host: string): boolean {
    const bare = host.replace(/^\[|\]$/g, "").toLowerCase();
    if (this.hosts.has(bare)) return true;
    const family = isIP(bare);
    return family !== 0 && this.allowed.check(bare, family === 4 ? "ipv4" : "ipv6");
  }

  /** True when connecting to `address` for `host` must be refused. */
  blocks(host: string, address: string): boolean {
    if (this.hosts.has(host.toLowerCase())) return false;
    const family = isIP(address) === 4 ? "ipv4" : "ipv6";
    if (this.allowed.check(address, family)) return false;
    return isBlockedAddress(address);
  }
}

/** Text fit for the attempt log: jsonb cannot hold NUL, and a receiver may send anything. */
function storable(text: string): string {
  return text.includes("\u0000") ? text.replaceAll("\u0000", "\uFFFD") : text;
}

function classify(error: unknown): { errorType: ErrorType; error: string } {
  const err = error as { code?: string; name?: string; message?: string; cause?: { code?: string; message?: string } };
  const code = err.code ?? err.cause?.code ?? "";
  const message = storable(err.message ?? String(error));
  if (err.name === "TimeoutError" || err.name === "AbortError" || code.includes("TIMEOUT")) {
    return { errorType: "timeout", error: "The receiver did not answer in time" };
  }
  if (code === "ENOTFOUND" || code === "EAI_AGAIN" || code === "ENODATA") return { errorType: "dns", error: message };
  if (code.startsWith("ERR_TLS") || code.startsWith("ERR_SSL") || /CERT|SELF_SIGNED|UNABLE_TO_VERIFY/.test(code)) {
    return { errorType: "tls", error: message };
  }
  return { errorType: "connection_refused", error: code ? `${code}: ${message}` : message };
}

async function readBody(body: AsyncIterable<Buffer | Uint8Array>): Promise<string> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of body) {
    if (size < MAX_BODY_BYTES) chunks.push(Buffer.from(chunk));
    size += chunk.length;
  }
  return storable(Buffer.concat(chunks).subarray(0, MAX_BODY_BYTES).toString("utf8"));
}

const MAX_AGENTS = 256;
const agents = new Map<string, Agent>();

/**
 * A connection pool pinned to one checked address: every connection it opens goes to that
 * address whatever the URL's host name says, so keeping connections alive between sends never
 * bypasses the address check. The least recently used pools are closed past MAX_AGENTS.
 */
function agentFor(address: string, family: number, timeoutMs: number): Agent {
  const key = `${address} ${timeoutMs}`;
  const known = agents.get(key);
  if (known) {
    agents.delete(key);
    agents.set(key, known);
    return known;
  }
  const agent = new Agent({
    connect: {
      // Node's connect asks for every address (`all`, for its family auto-selection) and then
      // expects a list: answering one address alone fails every send to a host name.
      lookup: (_hostname, options, callback) => {
        if (options.all) callback(null, [{ address, family }]);
        else callback(null, address, family);
      },
      timeout: timeoutMs,
    },
    headersTimeout: timeoutMs,
    bodyTimeout: timeoutMs,
    keepAliveTimeout: 4_000,
  });
  agents.set(key, agent);
  for (const [oldKey, old] of agents) {
    if (agents.size <= MAX_AGENTS) break;
    agents.delete(oldKey);
    void old.close().catch(() => undefined);
  }
  return agent;
}

/** Resolves a host name to every address it has (the system resolver: hosts file, then DNS). */
export type Resolve = (host: string) => Promise<LookupAddress[]>;

const systemResolve: Resolve = (host) => lookup(host, { all: true });

class DnsTimeout extends Error {}

/**
 * Resolves within what is left of the attempt's time: a resolver that never answers would
 * otherwise hold the attempt (and its worker slot) past WEBHOOK_TIMEOUT_MS. The lookup itself
 * cannot be cancelled; its late answer is ignored.
 */
function resolveWithin(resolve: Resolve, host: string, deadline: AbortSignal): Promise<LookupAddress[]> {
  return new Promise((done, fail) => {
    const onAbort = () => fail(new DnsTimeout());
    if (deadline.aborted) return onAbort();
    deadline.addEventListener("abort", onAbort, { once: true });
    resolve(host)
      .then(done, fail)
      .finally(() => deadline.removeEventListener("abort", onAbort));
  });
}

/**
 * The addresses that make a receiver host refused at send time, checked when its URL is saved:
 * a blocked literal address, or a name whose every address is blocked (the same policy and
 * ranges as `send`). Null when the host will not be refused, and also when the name does not
 * resolve or the lookup outlasts `timeoutMs`: DNS may differ by the time deliveries go out, and
 * `send` checks again then.
 */
export async function blockedHostAddresses(
  host: string,
  options: { timeoutMs: number; policy: AddressPolicy; resolve?: Resolve },
): Promise<string[] | null> {
  const bare = host.replace(/^\[|\]$/g, "");
  if (isIP(bare) !== 0) return options.policy.blocks(bare, bare) ? [bare] : null;
  if (options.policy.exempts(bare)) return null;
  let found: LookupAddress[];
  try {
    found = await resolveWithin(options.resolve ?? systemResolve, bare, AbortSignal.timeout(options.timeoutMs));
  } catch {
    return null;
  }
  if (found.length === 0 || !found.every((a) => options.policy.blocks(bare, a.address))) return null;
  return found.map((a) => a.address);
}

/**
 * Sends one delivery: resolves the host once, refuses a blocked address, and connects only to
 * the address it checked (no second lookup a DNS rebinding could change). No redirects are
 * followed. The lookup and the request share one deadline of `timeoutMs`. Conversion deliveries
 * send no headers beyond Content-Type; operational messages add their signature headers.
 * `resolve` replaces the system resolver (tests use one that never answers).
 */
export async function send(
  rawUrl: string,
  method: "GET" | "POST",
  body: string | null,
  options: {
    timeoutMs: number;
    policy: AddressPolicy;
    headers?: Record<string, string>;
    resolve?: Resolve;
  },
): Promise<SendResult> {
  const started = performance.now();
  const deadline = AbortSignal.timeout(options.timeoutMs);
  const done = (result: Omit<SendResult, "durationMs">): SendResult => ({
    ...result,
    durationMs: Math.round(performance.now() - started),
  });
  let url: URL;
  try {
    url = new URL(rawUrl);
    if (url.protocol !== "http:" && url.protocol !== "https:") throw new Error(`not http(s): ${url.protocol}`);
  } catch (error) {
    return done({ ok: false, response: null, errorType: "invalid_url", error: (error as Error).message });
  }
  const host = url.hostname.replace(/^\[|\]$/g, "");
  let address: string;
  let family: number;
  try {
    if (isIP(host) !== 0) {
      address = host;
      family = isIP(host);
    } else {
      const found = await resolveWithin(options.resolve ?? systemResolve, host, deadline);
      const blocked = found.find((a) => options.policy.blocks(host, a.address));
      if (blocked) {
        return done({
          ok: false,
          response: null,
          errorType: "blocked_address",
          error: `${host} resolves to ${blocked.address}, a private or reserved address`,
        });
      }
      const first = found[0];
      if (!first) throw Object.assign(new Error(`${host} has no address`), { code: "ENODATA" });
      address = first.address;
      family = first.family;
    }
  } catch (error) {
    if (error instanceof DnsTimeout) {
      return done({
        ok: false,
        response: null,
        errorType: "dns",
        error: `The DNS lookup of ${host} did not answer within ${options.timeoutMs} ms`,
      });
    }
    return done({ ok: false, response: null, ...classify(error) });
  }
  if (options.policy.blocks(host, address)) {
    return done({
      ok: false,
      response: null,
      errorType: "blocked_address",
      error: `${address} is a private or reserved address`,
    });
  }
  const dispatcher = agentFor(address, family, options.timeoutMs);
  try {
    const answer = await request(url, {
      method,
      dispatcher,
      signal: deadline,
      headers: { ...options.headers, ...(body === null ? {} : { "content-type": "application/json" }) },
      ...(body === null ? {} : { body }),
    });
    const text = await readBody(answer.body);
    const headers: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value !== undefined) headers[name] = storable(Array.isArray(value) ? value.join(", ") : value);
    }
    const ok = answer.statusCode >= 200 && answer.statusCode < 300;
    return done({
      ok,
      response: { status: answer.statusCode, headers, body: text },
      errorType: ok ? null : "http_status",
      error: ok ? null : `The receiver answered ${answer.statusCode}`,
    });
  } catch (error) {
    return done({ ok: false, response: null, ...classify(error) });
  }
}
