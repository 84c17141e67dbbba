import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createKeyViaApi, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { findRedis, REDIS_URL } from "./helpers/redis.js";

// Known before the tests are collected, so that runIf can use it.
const redisUp = await findRedis("rate-limit.test.ts");

function get(t: TestApp, url: string, as: string, ip?: string) {
  return t.call({
    method: "GET",
    url,
    headers: { authorization: as },
    ...(ip === undefined ? {} : { remoteAddress: ip }),
  });
}

function signIn(t: TestApp, who: Tenancy, ip: string, password = who.password) {
  return t.call({ method: "POST", url: "/api/v1/auth", payload: { email: who.email, password }, remoteAddress: ip });
}

function expectRateLimited(res: Awaited<ReturnType<TestApp["call"]>>, windowS = 60): void {
  expect(res.statusCode).toBe(429);
  const retryAfter = Number(res.headers["retry-after"]);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(windowS);
  expect(res.json()).toMatchObject({ code: "rate_limited", data: null });
  expect(res.json().message).toMatch(/^Too many requests/);
}

describe("rate limits per API key", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 3 } } });
  });
  afterAll(() => t.close());

  it("refuses a key's 4th call in the window with 429, leaves the tenant's other key alone, and meters the 429s", async () => {
    const who = await seedTenancy(t);
    const other = await createKeyViaApi(t, who, "Second key");

    for (let i = 0; i < 3; i++) expect((await get(t, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
    expectRateLimited(await get(t, "/api/v1/users", who.apiKey));
    // The limit follows the key, whatever address it comes from and whichever route it calls.
    expectRateLimited(await get(t, "/api/v1/api-tokens", who.apiKey, "10.20.0.9"));

    for (let i = 0; i < 3; i++) expect((await get(t, "/api/v1/users", other.apiKey)).statusCode).toBe(200);

    await t.ctx.usage.flush();
    const stats = await get(t, "/api/v1/traffic-controls/api-usage/stats", who.bearer);
    expect(stats.statusCode).toBe(200);
    expect(stats.json().data).toMatchObject({
      totalCalls: 8,
      rateLimited: 2,
      uniqueIps: 2,
      byStatusClass: { "2xx": 6, "3xx": 0, "4xx": 2, "5xx": 0 },
    });
    const otherKey = await get(t, `/api/v1/traffic-controls/api-usage/stats?apiTokenId=${other.id}`, who.bearer);
    expect(otherKey.json().data).toMatchObject({ totalCalls: 3, rateLimited: 0 });
  });
});

describe("rate limits per client IP where no credential is given", () => {
  let t: TestApp;
  let who: Tenancy;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { anonymousMax: 2 } } });
    who = await seedTenancy(t);
  });
  afterAll(() => t.close());

  it("refuses the 3rd sign-in attempt from one address; another address is unaffected", async () => {
    expect((await signIn(t, who, "10.30.0.1")).statusCode).toBe(200);
    expect((await signIn(t, who, "10.30.0.1")).statusCode).toBe(200);
    expectRateLimited(await signIn(t, who, "10.30.0.1"));
    expect((await signIn(t, who, "10.30.0.2")).statusCode).toBe(200);
  });

  it("counts failed attempts too, so guessing passwords is slowed down", async () => {
    expect((await signIn(t, who, "10.30.0.3", "wrong password 1")).statusCode).toBe(401);
    expect((await signIn(t, who, "10.30.0.3", "wrong password 2")).statusCode).toBe(401);
    expectRateLimited(await signIn(t, who, "10.30.0.3"));
  });
});

describe("the rate window", () => {
  it("lets a caller through again once the window has passed", async () => {
    const t = await startTestApp({ app: { rateLimit: { max: 2, windowMs: 1000 } } });
    try {
      const who = await seedTenancy(t);
      for (let i = 0; i < 2; i++) expect((await get(t, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
      const limited = await get(t, "/api/v1/users", who.apiKey);
      expectRateLimited(limited, 1);
      // The plugin's store keeps real time, not the app's clock: this one short wait is needed.
      await new Promise((resolve) => setTimeout(resolve, 1100));
      expect((await get(t, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe("limits shared across nodes", () => {
  it.runIf(redisUp)("shares one key's limit between two instances through Redis", async () => {
    const options = { env: { REDIS_URL }, app: { rateLimit: { max: 3 } } };
    const a = await startTestApp(options);
    try {
      const b = await startTestApp({ ...options, testDb: a.testDb });
      try {
        const who = await seedTenancy(a);
        for (let i = 0; i < 2; i++) expect((await get(a, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
        expect((await get(b, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
        expectRateLimited(await get(b, "/api/v1/users", who.apiKey));
        expectRateLimited(await get(a, "/api/v1/users", who.apiKey));
      } finally {
        await b.close();
      }
    } finally {
      await a.close();
    }
  });

  it("keeps limits per instance without REDIS_URL", async () => {
    const options = { app: { rateLimit: { max: 3 } } };
    const a = await startTestApp(options);
    try {
      const b = await startTestApp({ ...options, testDb: a.testDb });
      try {
        const who = await seedTenancy(a);
        for (let i = 0; i < 2; i++) expect((await get(a, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
        for (let i = 0; i < 2; i++) expect((await get(b, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
      } finally {
        await b.close();
      }
    } finally {
      await a.close();
    }
  });
});

describe("configuration", () => {
  it("takes the limits from RATE_LIMIT_PER_MINUTE and RATE_LIMIT_ANONYMOUS_PER_MINUTE", async () => {
    const t = await startTestApp({ env: { RATE_LIMIT_PER_MINUTE: "2", RATE_LIMIT_ANONYMOUS_PER_MINUTE: "2" } });
    try {
      const who = await seedTenancy(t);
      for (let i = 0; i < 2; i++) expect((await get(t, "/api/v1/users", who.apiKey)).statusCode).toBe(200);
      const limited = await get(t, "/api/v1/users", who.apiKey);
      expectRateLimited(limited);
      expect(limited.json().message).toContain("limit is 2 per 1 minute");

      for (let i = 0; i < 2; i++) expect((await signIn(t, who, "10.40.0.1")).statusCode).toBe(200);
      expectRateLimited(await signIn(t, who, "10.40.0.1"));
    } finally {
      await t.close();
    }
  });
});
