import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type TestApp } from "./helpers/app.js";
import { findRedis, REDIS_URL } from "./helpers/redis.js";

// The limits of the other ways in, shared by two nodes through Redis (REDIS_URL).

// Known before the tests are collected, so that runIf can use it.
const redisUp = await findRedis("limits-shared.test.ts");

// Counters in Redis outlive a test run: addresses are drawn at random so that the PGlite and the
// PostgreSQL runs (or a rerun within the window) never count against each other.
const randomIp = () =>
  `10.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250)}.${Math.floor(Math.random() * 250) + 1}`;

describe.runIf(redisUp)("limits shared across nodes through Redis", () => {
  let a: TestApp;
  let b: TestApp;

  beforeAll(async () => {
    const options = {
      env: { REDIS_URL },
      app: { rateLimit: { max: 3, postbackPerMinute: 3, loginFailuresPerAccount: 2, collectPerMinute: 2 } },
    };
    a = await startTestApp(options);
    b = await startTestApp({ ...options, testDb: a.testDb });
  });
  afterAll(async () => {
    await b?.close();
    await a?.close();
  });

  it("a postback key's budget", async () => {
    const who = await seedTenancy(a);
    const postback = (t: TestApp, n: number) =>
      t.call({ method: "GET", url: `/postback/${who.postbackKey}?type=Signup&externalId=shared-${n}` });
    expect((await postback(a, 1)).statusCode).toBe(201);
    expect((await postback(a, 2)).statusCode).toBe(201);
    expect((await postback(b, 3)).statusCode).toBe(201);
    expect((await postback(b, 4)).statusCode).toBe(429);
    expect((await postback(a, 5)).statusCode).toBe(429);
  });

  it("an address's page views", async () => {
    const ip = randomIp();
    const collect = (t: TestApp) =>
      t.call({
        method: "POST",
        url: "/collect",
        payload: { clickId: "none", url: "https://x.example/" },
        remoteAddress: ip,
      });
    expect((await collect(a)).statusCode).toBe(404);
    expect((await collect(b)).statusCode).toBe(404);
    expect((await collect(a)).statusCode).toBe(429);
  });

  it("an account's failed sign-ins", async () => {
    const who = await seedTenancy(a);
    const signIn = (t: TestApp, password: string) =>
      t.call({
        method: "POST",
        url: "/api/v1/auth",
        payload: { email: who.email, password },
        remoteAddress: randomIp(),
      });
    expect((await signIn(a, "wrong 1")).statusCode).toBe(401);
    expect((await signIn(b, "wrong 2")).statusCode).toBe(401);
    expect((await signIn(a, who.password)).statusCode).toBe(429);
  });

  it("an API key's budget across /api/v1 and /mcp", async () => {
    const who = await seedTenancy(a, { key: { scopes: ["reports.read"] } });
    const api = (t: TestApp) =>
      t.call({ method: "GET", url: "/api/v1/reports/events/performance", headers: { authorization: who.apiKey } });
    for (const t of [a, b, a]) expect((await api(t)).statusCode).not.toBe(429);
    const mcp = await b.call({
      method: "POST",
      url: "/mcp",
      headers: { authorization: who.apiKey, accept: "application/json, text/event-stream" },
      payload: { jsonrpc: "2.0", id: 1, method: "ping" },
    });
    expect(mcp.statusCode).toBe(429);
  });
});
