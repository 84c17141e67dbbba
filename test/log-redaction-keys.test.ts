import { randomBytes } from "node:crypto";
import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestApp, type TestApp } from "./helpers/app.js";

/**
 * API keys are base64 of 32 random bytes (crypto.ts randomSecret): 43 characters of A-Z a-z 0-9
 * `+` `/` and a final `=`. About half hold a `/`, and a redaction pattern without `/` let about
 * 29 % of them through in a `gclid` parameter. Keys with `+`, `/` and `=` in awkward places, and
 * random ones that hold a `/`, are sent everywhere a key can turn up, raw and percent-encoded,
 * while the service's real logger writes at trace level; no piece of any key may reach a line.
 */

const lines: string[] = [];
let t: TestApp;
let postbackKey = "";

const enc = encodeURIComponent;
/** Percent-encoded with lower-case hex (`%2f`), as some clients write it. */
const encLower = (value: string) => enc(value).replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase());

/** Base64 of 32 random bytes with `edit` applied to its 43 characters (the `=` stays last). */
function shaped(edit: (chars: string[]) => void): string {
  const chars = randomBytes(32).toString("base64").slice(0, 43).split("");
  edit(chars);
  return `${chars.join("")}=`;
}

const set = (at: Record<number, string>) => (chars: string[]) => {
  for (const [index, c] of Object.entries(at)) chars[Number(index)] = c;
};

/** Keys shaped to defeat a pattern: the `/` cuts them into short runs that read as words. */
const CRAFTED = [
  shaped(set({ 0: "/" })),
  shaped(set({ 0: "+", 1: "/" })),
  shaped(set({ 42: "/" })),
  // Leading segments of lower case and digits, as a route's would be.
  shaped((c) => {
    c.splice(0, 14, ..."abcdefg/hij12/".split(""));
  }),
  shaped(set({ 8: "/", 16: "/", 24: "/", 32: "/", 40: "+" })),
  shaped(set({ 20: "/", 21: "/", 22: "+", 23: "+" })),
];

/** Random keys as randomSecret makes them, taken until each holds a `/`. */
function randomWithSlash(count: number): string[] {
  const out: string[] = [];
  while (out.length < count) {
    const key = randomBytes(32).toString("base64");
    if (key.includes("/")) out.push(key);
  }
  return out;
}

const RANDOM = randomWithSlash(8);
const KEYS = [...CRAFTED, ...RANDOM];

/** The places a random key is sent: the ones a pattern without `/` missed. */
function somePlacesOf(key: string): InjectOptions[] {
  return [
    { method: "GET", url: `/go/1/1?gclid=${key}&pb=ok` },
    { method: "GET", url: `/go/1/1?gclid=${key.slice(0, -1)}` },
    { method: "GET", url: `/postback/${key}?clickId=x` },
    { method: "GET", url: `/api/v1/api-tokens/${key}` },
    { method: "GET", url: "/api/v1/me", headers: { authorization: key } },
  ];
}

/** Every place a key can be sent: headers, query parameters of any name, the path, bodies. */
function placesOf(key: string): InjectOptions[] {
  const places: InjectOptions[] = [];
  for (const authorization of [`ApiKey ${key}`, `Bearer ${key}`, key, `Basic ${key}`]) {
    places.push({ method: "GET", url: "/api/v1/me", headers: { authorization } });
  }
  places.push({ method: "GET", url: "/api/v1/me", headers: { "x-api-key": key } });
  for (const name of ["gclid", "pa", "clickId", "apiKey", "token", "x"]) {
    for (const value of [key, enc(key), encLower(key)]) {
      places.push({ method: "GET", url: `/go/1/1?${name}=${value}&pb=ok` });
    }
  }
  for (const name of ["q", "apiKey"]) {
    places.push({ method: "GET", url: `/api/v1/conversions?${name}=${enc(key)}`, headers: { authorization: "x" } });
  }
  for (const url of [
    `/postback/${key}`,
    `/postback/${key}?clickId=x`,
    `/postback/${enc(key)}?clickId=x&type=Deposit`,
    `//postback//${key}?clickId=x`,
    `/postback/${postbackKey}?clickId=${enc(key)}&type=Deposit`,
    `/api/v1/api-tokens/${enc(key)}`,
    `/api/v1/api-tokens/${key}`,
    `/api/v1/api-tokens/${key.slice(0, -1)}?limit=5`,
    `/${key}`,
  ]) {
    places.push({ method: "GET", url });
  }
  places.push(
    {
      method: "POST",
      url: `/postback/${enc(key)}`,
      headers: { "content-type": "application/x-www-form-urlencoded" },
      payload: `clickId=${enc(key)}&type=Deposit&apiKey=${enc(key)}`,
    },
    {
      method: "POST",
      url: `/postback/${postbackKey}`,
      headers: { "content-type": "application/json" },
      payload: { clickId: key, type: "Deposit" },
    },
    {
      method: "POST",
      url: "/api/v1/conversions",
      headers: { authorization: `ApiKey ${key}` },
      payload: { clickId: key, type: "Deposit" },
    },
  );
  return places;
}

beforeAll(async () => {
  t = await startTestApp({
    app: {
      logger: {
        level: "trace",
        stream: {
          write(line: string) {
            lines.push(line);
          },
        },
      },
    },
  });
  const tenant = await t.call({
    method: "POST",
    url: "/api/admin/tenants",
    headers: { authorization: `Bearer ${ADMIN_KEY}` },
    payload: { name: "Keys in logs" },
  });
  expect(tenant.statusCode, tenant.body).toBe(201);
  postbackKey = tenant.json().data.postbackKey;
});
afterAll(async () => {
  await t?.close();
});

describe("log redaction of keys holding + / and =", () => {
  it("every key holds what a pattern must cope with", () => {
    for (const key of KEYS) expect(key).toMatch(/^[A-Za-z0-9+/]{43}=$/);
    expect(KEYS.every((key) => key.includes("/"))).toBe(true);
    expect(KEYS.some((key) => key.includes("+"))).toBe(true);
  });

  it("sends each key everywhere a key can turn up, and logs it nowhere", async () => {
    // A password field (sign-in hashes even an unknown person's, ~300 ms: once is enough).
    await t.call({ method: "POST", url: "/api/v1/auth", payload: { email: "nobody@example.com", password: KEYS[0] } });
    for (const key of KEYS) {
      for (const place of CRAFTED.includes(key) ? placesOf(key) : somePlacesOf(key)) {
        const res = await t.call(place);
        expect(res.statusCode, `${place.method} ${place.url}`).toBeLessThan(500);
      }
      // Lines written outside a request: an error quoting a URL, a trace line with an object.
      t.app.log.error({ err: new Error(`GET https://r.example/in?gclid=${key} failed: ${key}`) }, `sending ${key}`);
      t.app.log.trace({ url: `https://r.example/pb/${enc(key)}`, header: `Authorization: ${key}` }, "trace");
    }

    expect(lines.length).toBeGreaterThan(CRAFTED.length * 50);
    for (const [index, line] of lines.entries()) {
      for (const key of [...KEYS, postbackKey]) {
        const bare = key.replace(/=$/, "");
        for (let at = 0; at + 12 <= bare.length; at++) {
          const piece = bare.slice(at, at + 12);
          for (const shown of new Set([piece, enc(piece), encLower(piece)])) {
            if (line.includes(shown)) throw new Error(`log line ${index} shows '${shown}' of key ${key}: ${line}`);
          }
        }
      }
    }
  });

  it("keeps the rest of a request line readable", () => {
    const log = lines.join("");
    expect(log).toContain('"url":"/go/1/1?gclid=[redacted]&pb=ok"');
    expect(log).toContain('"url":"/postback/[redacted]?clickId=x"');
    expect(log).toContain('"url":"/api/v1/conversions?apiKey=[redacted]"');
    expect(log).toMatch(/"url":"\/api\/v1\/api-tokens\/?\[redacted\]"/);
  });
});
