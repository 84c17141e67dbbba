import { randomBytes } from "node:crypto";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { findRedis, REDIS_URL } from "./helpers/redis.js";

// Refused credentials cost something to try (docs/limits.md "Rate limits and quotas"): every way
// in (/api/v1 with API keys and bearer tokens, /mcp, postback keys) counts the credentials it
// refuses per client IP, and past AUTH_FAILURES_PER_IP_PER_MINUTE the address gets 429 with
// Retry-After before anything is looked up. The lookups are read from the verifiers' own counters.

const LIMIT = 3;
type Response = Awaited<ReturnType<TestApp["call"]>>;

// Counters in Redis outlive a test run: addresses are drawn at random so that runs never meet.
const randomIp = () =>
  `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;
const randomKey = () => `ApiKey ${randomBytes(32).toString("base64url")}`;

function expectRetryAfter(res: Response): void {
  const retryAfter = Number(res.headers["retry-after"]);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(60);
}

function expectEnvelope429(res: Response): void {
  expect(res.statusCode, res.body).toBe(429);
  expectRetryAfter(res);
  expect(res.json()).toMatchObject({ code: "rate_limited", data: null });
  expect(res.json().message).toBe(
    `Too many refused credentials from this address: limit is ${LIMIT} per 1 minute; retry later`,
  );
}

const api = (t: TestApp, authorization: string | undefined, ip: string) =>
  t.call({
    method: "GET",
    url: "/api/v1/brands",
    headers: authorization === undefined ? {} : { authorization },
    remoteAddress: ip,
  });

const mcp = (t: TestApp, authorization: string, ip: string) =>
  t.call({
    method: "POST",
    url: "/mcp",
    headers: { authorization, accept: "application/json, text/event-stream" },
    payload: { jsonrpc: "2.0", id: 1, method: "ping" },
    remoteAddress: ip,
  });

const postback = (t: TestApp, key: string, ip: string, n: number) =>
  t.call({ method: "GET", url: `/postback/${key}?type=Signup&externalId=auth-limit-${n}`, remoteAddress: ip });

// Known before the tests are collected, so that runIf can use it.
const redisUp = await findRedis("auth-failure-limit.test.ts");
const options = {
  // With Redis up the counts are shared as well; the refusal is decided from memory either way.
  env: redisUp ? { REDIS_URL } : {},
  app: { rateLimit: { max: 100_000, authFailuresPerIpPerMinute: LIMIT } },
};

describe("refused credentials per address", () => {
  let t: TestApp;
  /** A second node on the same database (with Redis only). */
  let b: TestApp | undefined;
  let who: Tenancy;

  beforeAll(async () => {
    t = await startTestApp(options);
    if (redisUp) b = await startTestApp({ ...options, testDb: t.testDb });
    who = await seedTenancy(t, { key: { scopes: ["catalog.read", "reports.read"] } });
  });
  afterAll(async () => {
    await b?.close();
    await t.close();
  });

  it("/api/v1: random API keys get 401, then 429 with Retry-After and no lookup, the right key included", async () => {
    const ip = randomIp();
    const before = t.ctx.apiKeys.lookups;
    for (let i = 0; i < LIMIT; i++) expect((await api(t, randomKey(), ip)).statusCode).toBe(401);
    expect(t.ctx.apiKeys.lookups - before).toBe(LIMIT);

    for (let i = 0; i < 5; i++) expectEnvelope429(await api(t, randomKey(), ip));
    // Bearer tokens and the right key from that address too: nothing more is looked up.
    expectEnvelope429(await api(t, "Bearer a.b.c", ip));
    expectEnvelope429(await api(t, who.apiKey, ip));
    expect(t.ctx.apiKeys.lookups - before).toBe(LIMIT);

    // The good key from another address still works.
    expect((await api(t, who.apiKey, randomIp())).statusCode).toBe(200);
  });

  it("/api/v1: refused bearer tokens and unknown schemes count; a request without a credential does not", async () => {
    const ip = randomIp();
    for (let i = 0; i < 10; i++) expect((await api(t, undefined, ip)).statusCode).toBe(401);
    expect((await api(t, "Bearer not-a-token", ip)).statusCode).toBe(401);
    expect((await api(t, `Bearer ${randomBytes(20).toString("hex")}.e30.x`, ip)).statusCode).toBe(401);
    expect((await api(t, "Token abc", ip)).statusCode).toBe(401);
    expectEnvelope429(await api(t, who.bearer, ip));
    expect((await api(t, who.bearer, randomIp())).statusCode).toBe(200);
  });

  it("/mcp: random keys get 401, then 429 in JSON-RPC with Retry-After and no lookup", async () => {
    const ip = randomIp();
    const before = t.ctx.apiKeys.lookups;
    for (let i = 0; i < LIMIT; i++) expect((await mcp(t, randomKey(), ip)).statusCode).toBe(401);
    expect(t.ctx.apiKeys.lookups - before).toBe(LIMIT);
    const refused = await mcp(t, randomKey(), ip);
    expect(refused.statusCode, refused.body).toBe(429);
    expectRetryAfter(refused);
    expect(JSON.parse(refused.body)).toEqual({
      jsonrpc: "2.0",
      error: {
        code: -32029,
        message: `Too many refused credentials from this address: limit is ${LIMIT} per 1 minute; retry later`,
      },
      id: null,
    });
    expect((await mcp(t, who.apiKey, ip)).statusCode).toBe(429);
    expect(t.ctx.apiKeys.lookups - before).toBe(LIMIT);
    expect((await mcp(t, who.apiKey, randomIp())).statusCode).toBe(200);
  });

  it("one budget for every way in: failures on /api/v1 close /mcp and postbacks to that address", async () => {
    const ip = randomIp();
    for (let i = 0; i < LIMIT; i++) expect((await api(t, randomKey(), ip)).statusCode).toBe(401);
    expect((await mcp(t, who.apiKey, ip)).statusCode).toBe(429);
    expect((await postback(t, who.postbackKey, ip, 0)).statusCode).toBe(429);
  });

  it("postback keys: unknown keys get 404, then 429 in the postback's JSON with Retry-After and no lookup", async () => {
    const ip = randomIp();
    const before = t.ctx.tracking.postbackKeyLookups;
    for (let i = 0; i < LIMIT; i++) {
      const res = await postback(t, randomBytes(32).toString("base64url"), ip, i);
      expect(res.statusCode, res.body).toBe(404);
    }
    expect(t.ctx.tracking.postbackKeyLookups - before).toBe(LIMIT);
    for (const key of [randomBytes(32).toString("base64url"), who.postbackKey]) {
      const refused = await postback(t, key, ip, 10);
      expect(refused.statusCode, refused.body).toBe(429);
      expectRetryAfter(refused);
      expect(JSON.parse(refused.body)).toEqual({
        status: "error",
        message: `Too many requests with refused credentials from this address: limit is ${LIMIT} per 1 minute; retry later`,
      });
    }
    expect(t.ctx.tracking.postbackKeyLookups - before).toBe(LIMIT);
    // The tenant's own key from another address is recorded.
    expect((await postback(t, who.postbackKey, randomIp(), 11)).statusCode).toBe(201);
  });

  it.runIf(redisUp)("through Redis, an address's failures on one node count on the other", async () => {
    const other = b as TestApp;
    const ip = randomIp();
    expect((await api(t, randomKey(), ip)).statusCode).toBe(401);
    expect((await api(other, randomKey(), ip)).statusCode).toBe(401);
    expect((await api(t, randomKey(), ip)).statusCode).toBe(401);
    // The other node has seen one failure itself; its next one brings back the shared count of four.
    expect((await api(other, randomKey(), ip)).statusCode).toBe(401);
    const before = other.ctx.apiKeys.lookups;
    expectEnvelope429(await api(other, who.apiKey, ip));
    expect(other.ctx.apiKeys.lookups).toBe(before);
    expect((await api(other, who.apiKey, randomIp())).statusCode).toBe(200);
  });
});
