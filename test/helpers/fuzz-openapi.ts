/**
 * A seeded fuzz driven by the service's own OpenAPI documents: every operation, with hostile
 * values for its path and query parameters, its headers and its JSON body fields. Everything
 * random comes from one PRNG with a fixed seed, so a failure is replayed by the same seed.
 */
import { seededRandom } from "../../src/platform/seeded-random.js";

/** The parts of an OpenAPI 3.1 document the fuzz reads. */
export interface JsonSchema {
  type?: string | string[];
  properties?: Record<string, JsonSchema>;
  required?: string[];
  additionalProperties?: boolean | JsonSchema;
  items?: JsonSchema;
  enum?: unknown[];
  const?: unknown;
  anyOf?: JsonSchema[];
  format?: string;
  minimum?: number;
  maximum?: number;
  minLength?: number;
  maxLength?: number;
  minItems?: number;
  maxItems?: number;
  default?: unknown;
  example?: unknown;
  examples?: unknown[];
}

export interface Parameter {
  name: string;
  in: "path" | "query" | "header" | "cookie";
  required?: boolean;
  schema?: JsonSchema;
  example?: unknown;
}

interface Operation {
  parameters?: Parameter[];
  requestBody?: { content?: Record<string, { schema?: JsonSchema }> };
  security?: Record<string, string[]>[];
}

export interface OpenApiDocument {
  paths: Record<string, Record<string, Operation>>;
  security?: Record<string, string[]>[];
}

export interface FuzzOperation {
  method: string;
  /** The path template, `/api/v1/brands/{id}`. */
  path: string;
  parameters: Parameter[];
  /** The JSON body's schema; undefined when the operation takes no body. */
  body: JsonSchema | undefined;
  hasBody: boolean;
}

const METHODS = new Set(["get", "put", "post", "delete", "patch"]);

export function operationsOf(doc: OpenApiDocument): FuzzOperation[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => METHODS.has(method))
      .map(([method, operation]) => {
        const json = operation.requestBody?.content?.["application/json"];
        return {
          method: method.toUpperCase(),
          path,
          parameters: operation.parameters ?? [],
          body: json?.schema,
          hasBody: json !== undefined,
        };
      }),
  );
}

/** The fuzz run's choices, drawn from one seed so a failing run can be repeated. */
export class Prng {
  readonly next: () => number;

  constructor(readonly seed: number) {
    this.next = seededRandom(seed);
  }

  int(n: number): number {
    return Math.floor(this.next() * n);
  }

  chance(p: number): boolean {
    return this.next() < p;
  }

  pick<T>(items: readonly T[]): T {
    const item = items[this.int(items.length)];
    if (item === undefined) throw new Error("pick from an empty list");
    return item;
  }
}

/**
 * Strings no caller should be able to turn into a 5xx, wherever they go (path, query, header,
 * JSON string). `%00` and friends are raw in a query string (decoded by the server), literal in
 * JSON.
 */
export const HOSTILE_STRINGS: readonly string[] = [
  "",
  " ",
  "\u0000",
  "a\u0000b",
  "%00",
  "%",
  "%zz",
  "%ED%A0%80",
  "\ud800",
  "x\udfffy",
  "\ud83d",
  "😀🏳️‍🌈",
  "Ω≈ç√∫ 中文 العربية",
  "\u202e\u200b\ufeff",
  "\t\r\n",
  "null",
  "undefined",
  "true",
  "NaN",
  "Infinity",
  "-Infinity",
  "-1",
  "0",
  "-0",
  "1.5",
  "0x10",
  "1e+21",
  "1e+308",
  "1e309",
  "-1e309",
  "9007199254740993",
  "9223372036854775808",
  "1234567890123456789012345678901234567890",
  "-1234567890123456789012345678901234567890",
  "0000-01-01",
  "99999-01-01",
  "+275760-09-13",
  "+275760-09-13T00:00:00.000Z",
  "-271821-04-20T00:00:00Z",
  "2026-02-30",
  "2026-13-01",
  "2026-11-01T25:61:61Z",
  "0000-01-01T00:00:00Z",
  "1970-01-01T00:00:00Z",
  "' or 1=1 --",
  "\\",
  "%_",
  "../../etc/passwd",
  "<script>alert(1)</script>",
  // biome-ignore lint/suspicious/noTemplateCurlyInString: a webhook placeholder, sent as text
  "${clickId}",
  "{{{clickId}}}",
  "http://127.0.0.1:1/x",
  "javascript:alert(1)",
  "usr_0000000000000000",
  "tnt_x",
  "clk_",
  "cnv_\u0000",
  "a".repeat(300),
  "é".repeat(5000),
  "x".repeat(70_000),
];

/** JSON values of every type, for body fields (strings come from HOSTILE_STRINGS too). */
const HOSTILE_JSON: readonly unknown[] = [
  null,
  true,
  false,
  0,
  -1,
  1.5,
  -0.5,
  1e21,
  1e308,
  -1e308,
  2 ** 53 + 2,
  2 ** 63,
  [],
  [null],
  [1, "a", null, {}],
  {},
  { a: 1 },
  { constructor: { prototype: { polluted: true } } },
  // An own `__proto__` key, as a parsed body has it (a literal would set the prototype instead).
  JSON.parse('{"__proto__": {"polluted": true}}') as unknown,
];

/** Raw JSON tokens JSON.stringify cannot write: out-of-range and over-long numbers. */
const RAW_NUMBERS: readonly string[] = [
  "1e309",
  "-1e309",
  "1234567890123456789012345678901234567890",
  "0.0000000000000000000000000000000000000000000001",
  // Nesting far deeper than any schema: a recursive walker or validator would overflow its stack.
  `${"[".repeat(50_000)}${"]".repeat(50_000)}`,
  `${'{"a":'.repeat(20_000)}1${"}".repeat(20_000)}`,
];

/** A raw token in a body: written without quotes when the body is serialized. */
class Raw {
  constructor(readonly text: string) {}
}

function nested(depth: number): unknown {
  let value: unknown = "deep";
  for (let i = 0; i < depth; i += 1) value = i % 2 === 0 ? { a: value } : [value];
  return value;
}

export function hostileString(rng: Prng): string {
  return rng.pick(HOSTILE_STRINGS);
}

function hostileJson(rng: Prng): unknown {
  const roll = rng.int(10);
  if (roll < 4) return hostileString(rng);
  if (roll < 8) return rng.pick(HOSTILE_JSON);
  if (roll < 9) return new Raw(rng.pick(RAW_NUMBERS));
  return rng.chance(0.5) ? nested(64) : Array.from({ length: 2000 }, (_, i) => i);
}

/** Ids to try in paths, query filters and body references: the caller's, another tenant's, and more. */
export interface IdPool {
  /** Every id seen in the caller's answers (prefixed strings and catalog numbers). */
  own: (string | number)[];
  /** Ids of another tenant: a 404 or a 400, never its data. */
  foreign: (string | number)[];
  /**
   * The caller's ids by the list they came from (`/api/v1/brands`, for `/api/v1/brands/{id}`)
   * or by the parameter they fit (`brandId`, `postbackKey`).
   */
  named: Record<string, (string | number)[]>;
}

function types(schema: JsonSchema): string[] {
  if (schema.type === undefined) return [];
  return Array.isArray(schema.type) ? schema.type : [schema.type];
}

/** A value the schema accepts, mostly (ids come from the pool, so they may name nothing). */
export function validValue(rng: Prng, schema: JsonSchema | undefined, name: string, ids: IdPool, depth = 0): unknown {
  if (!schema) return rng.chance(0.5) ? name : 1;
  if (schema.enum && schema.enum.length > 0) return rng.pick(schema.enum);
  if (schema.const !== undefined) return schema.const;
  if (schema.anyOf && schema.anyOf.length > 0) return validValue(rng, rng.pick(schema.anyOf), name, ids, depth);
  if (schema.examples && schema.examples.length > 0 && rng.chance(0.5)) return rng.pick(schema.examples);
  if (schema.example !== undefined && rng.chance(0.5)) return schema.example;
  const kinds = types(schema).filter((t) => t !== "null");
  const kind = kinds.length > 0 ? rng.pick(kinds) : "string";
  const looksLikeId = /id$/i.test(name) || name === "id";
  switch (kind) {
    case "integer":
    case "number": {
      if (looksLikeId) {
        const numeric = (ids.named[name] ?? ids.own).filter((v): v is number => typeof v === "number");
        if (numeric.length > 0 && rng.chance(0.9)) return rng.pick(numeric);
      }
      const min = schema.minimum ?? 0;
      const max = Math.min(schema.maximum ?? min + 100, min + 100);
      return min + rng.int(max - min + 1);
    }
    case "boolean":
      return rng.chance(0.5);
    case "array": {
      const count = Math.max(schema.minItems ?? 0, rng.int(3));
      return Array.from({ length: count }, () => validValue(rng, schema.items, name.replace(/s$/, ""), ids, depth + 1));
    }
    case "object": {
      const out: Record<string, unknown> = {};
      const required = new Set(schema.required ?? []);
      for (const [key, child] of Object.entries(schema.properties ?? {})) {
        if (required.has(key) || rng.chance(0.6)) out[key] = validValue(rng, child, key, ids, depth + 1);
      }
      if (typeof schema.additionalProperties === "object" && rng.chance(0.5)) {
        out[`k${rng.int(10)}`] = validValue(rng, schema.additionalProperties, "value", ids, depth + 1);
      }
      return out;
    }
    default: {
      if (looksLikeId) {
        const strings = (ids.named[name] ?? ids.own).filter((v): v is string => typeof v === "string");
        if (strings.length > 0 && rng.chance(0.9)) return rng.pick(strings);
      }
      if (schema.format === "date-time") return new Date(Date.UTC(2026, 10, 1 + rng.int(25))).toISOString();
      if (schema.format === "date") return `2026-11-${String(1 + rng.int(25)).padStart(2, "0")}`;
      if (schema.format === "email") return `fuzz${rng.int(1_000_000)}@example.com`;
      if (/url/i.test(name)) return `https://example.com/hook/${rng.int(1000)}?c={clickId}`;
      const text = `fz${rng.int(1_000_000)}`.padEnd(schema.minLength ?? 0, "x");
      return schema.maxLength === undefined ? text : text.slice(0, schema.maxLength);
    }
  }
}

/** Replaces a few values deep inside `value` with hostile ones (or the whole value, sometimes). */
function mutate(rng: Prng, value: unknown, depth = 0): unknown {
  if (depth === 0 && rng.chance(0.1)) return hostileJson(rng);
  if (Array.isArray(value)) {
    if (value.length === 0 || rng.chance(0.2)) return [...value, hostileJson(rng)];
    const i = rng.int(value.length);
    return value.map((item, j) => (j === i ? mutate(rng, item, depth + 1) : item));
  }
  if (value !== null && typeof value === "object" && !(value instanceof Raw)) {
    const out: Record<string, unknown> = { ...(value as Record<string, unknown>) };
    const keys = Object.keys(out);
    if (keys.length === 0 || rng.chance(0.1)) {
      out[rng.pick(["extra", "__proto__", "constructor", "\u0000", "\ud800"])] = hostileJson(rng);
      return out;
    }
    // One to three fields changed; the others stay valid, so the route gets past its schema
    // often enough to reach its own checks and its queries.
    const changes = 1 + rng.int(3);
    for (let c = 0; c < changes; c += 1) {
      const key = rng.pick(keys);
      out[key] = rng.chance(0.25) ? mutate(rng, out[key], depth + 1) : hostileJson(rng);
    }
    return out;
  }
  return hostileJson(rng);
}

/** JSON text for a body, with Raw tokens written bare. */
export function serialize(body: unknown): string {
  const raws: string[] = [];
  const text = JSON.stringify(body, (_key, value: unknown) => {
    if (value instanceof Raw) {
      raws.push(value.text);
      return `\u0001raw${raws.length - 1}\u0001`;
    }
    return value;
  });
  // JSON.stringify writes a lone surrogate as the escape `\ud800`: the server parses it back
  // to a lone surrogate, which is what the fuzz means to send.
  return (text ?? "null").replace(/"\\u0001raw(\d+)\\u0001"/g, (_m, i: string) => raws[Number(i)] ?? "0");
}

/** A query-string or path value: the raw-text strings above stay raw (`%00` stays an escape). */
export function encodeValue(value: string): string {
  if (/^%(00|zz|ED%A0%80)?$/.test(value) || value === "%_") return value;
  // encodeURIComponent throws on a lone surrogate: send its UTF-8-ish bytes, as a client might.
  return [...value]
    .map((ch) => {
      const code = ch.charCodeAt(0);
      if (ch.length === 1 && code >= 0xd800 && code <= 0xdfff) {
        return `%${(0xe0 | (code >> 12)).toString(16)}%${(0x80 | ((code >> 6) & 0x3f)).toString(16)}%${(0x80 | (code & 0x3f)).toString(16)}`;
      }
      return encodeURIComponent(ch);
    })
    .join("");
}

function asText(value: unknown): string {
  if (typeof value === "string") return value;
  if (value instanceof Raw) return value.text;
  return JSON.stringify(value) ?? "";
}

export interface FuzzRequest {
  method: string;
  url: string;
  headers: Record<string, string>;
  payload?: string;
}

/** One request for `op`: every parameter omitted, valid, an id from the pool, or hostile. */
/** The caller's ids that fit a parameter: by the list a path id belongs to, or by the parameter's name. */
function fitting(ids: IdPool, path: string, name: string): (string | number)[] {
  const at = path.indexOf(`/{${name}}`);
  const list = name === "id" && at > 0 ? ids.named[path.slice(0, at)] : undefined;
  const found = list ?? ids.named[name];
  return found && found.length > 0 ? found : ids.own;
}

function pathValue(rng: Prng, op: FuzzOperation, param: Parameter, ids: IdPool, hostile: boolean): string {
  if (!hostile) return String(rng.pick(fitting(ids, op.path, param.name)));
  if (rng.chance(0.3) && ids.foreign.length > 0) return String(rng.pick(ids.foreign));
  if (rng.chance(0.15)) return String(rng.pick(ids.own));
  return hostileString(rng);
}

/**
 * One request for `op`. Most requests aim at one target (a parameter or the body) with a hostile
 * value and keep the rest valid, so the value reaches the route's own checks and queries; the
 * others scatter hostile values everywhere.
 */
export function buildRequest(
  rng: Prng,
  op: FuzzOperation,
  ids: IdPool,
  headers: Record<string, string>,
  /** A valid body for operations whose schema says too little (MCP's JSON-RPC), mutated like the others. */
  bodyFor?: (rng: Prng) => unknown,
): FuzzRequest {
  const targets = [...op.parameters.map((p) => p.name), ...(op.hasBody ? ["(body)"] : [])];
  const scatter = targets.length === 0 || rng.chance(0.3);
  const target = scatter ? undefined : rng.pick(targets);
  const hostile = (name: string) => (scatter ? rng.chance(0.4) : name === target);
  let path = op.path;
  const query: string[] = [];
  const out: Record<string, string> = { ...headers };
  for (const param of op.parameters) {
    const bad = hostile(param.name);
    if (param.in === "path") {
      // An empty segment routes elsewhere (or nowhere): still a fine request to send.
      path = path.replace(`{${param.name}}`, encodeValue(pathValue(rng, op, param, ids, bad)));
      continue;
    }
    if (!bad && !param.required && rng.chance(0.4)) continue;
    const value = bad
      ? hostileString(rng)
      : asText(validValue(rng, param.schema, param.name, { ...ids, own: fitting(ids, op.path, param.name) }));
    if (param.in === "query") {
      query.push(`${encodeURIComponent(param.name)}=${encodeValue(value)}`);
      // A repeated parameter arrives as an array.
      if (bad && rng.chance(0.1)) query.push(`${encodeURIComponent(param.name)}=${encodeValue(hostileString(rng))}`);
    } else if (param.in === "header") {
      // Header values cannot hold control characters or non-Latin-1 text: send them encoded.
      out[param.name] = encodeValue(value).slice(0, 8000);
    }
  }
  if (scatter && rng.chance(0.1)) query.push(`${encodeValue(hostileString(rng)).slice(0, 50)}=1`);
  const url = query.length > 0 ? `${path}?${query.join("&")}` : path;
  if (!op.hasBody) return { method: op.method, url, headers: out };
  const valid = bodyFor ? bodyFor(rng) : validValue(rng, op.body ?? { type: "object" }, "body", ids);
  const body = hostile("(body)") ? mutate(rng, valid) : valid;
  // The tracking routes also take forms (programs' postbacks) and text/plain holding JSON
  // (browsers' sendBeacon).
  const roll = path.startsWith("/api/") ? 1 : rng.next();
  if (roll < 0.15 && body !== null && typeof body === "object" && !Array.isArray(body)) {
    const form = Object.entries(body as Record<string, unknown>).map(
      ([key, value]) => `${encodeValue(key)}=${encodeValue(asText(value))}`,
    );
    out["content-type"] = "application/x-www-form-urlencoded";
    return { method: op.method, url, headers: out, payload: form.join("&") };
  }
  out["content-type"] = roll < 0.3 ? "text/plain" : "application/json";
  return { method: op.method, url, headers: out, payload: serialize(body) };
}

/** Collects every `id` and `...Id` value in an answer, for the pools. */
export function collectIds(value: unknown, into: Set<string | number>, depth = 0): void {
  if (depth > 6 || value === null || typeof value !== "object") return;
  if (Array.isArray(value)) {
    for (const item of value) collectIds(item, into, depth + 1);
    return;
  }
  for (const [key, item] of Object.entries(value as Record<string, unknown>)) {
    if ((key === "id" || /Id$/.test(key)) && (typeof item === "string" || typeof item === "number")) into.add(item);
    else collectIds(item, into, depth + 1);
  }
}
