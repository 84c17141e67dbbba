import { describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type TestApp } from "./helpers/app.js";

type Response = Awaited<ReturnType<TestApp["call"]>>;

function get(t: TestApp, url: string, authorization: string, ip: string) {
  return t.call({ method: "GET", url, headers: { authorization }, remoteAddress: ip });
}

function expectRateLimited(res: Response): void {
  expect(res.statusCode).toBe(429);
  expect(Number(res.headers["retry-after"])).toBeGreaterThan(0);
  expect(Number(res.headers["retry-after"])).toBeLessThanOrEqual(60);
  expect(res.json()).toMatchObject({ code: "rate_limited", data: null });
  expect(res.json().message).toMatch(/^Too many requests/);
}

// A refused credential is answered 401 and, below AUTH_FAILURES_PER_IP_PER_MINUTE (100 by default,
// test/auth-failure-limit.test.ts), never holds up the address's valid callers: keys are 256-bit
// random, so guessing is no threat, while a shared address (an office, a CI runner) must not lose
// its valid keys to one misconfigured script retrying now and then.
describe("refused credentials", () => {
  it("stay 401 however many, and a valid key from the same address still works", async () => {
    const t = await startTestApp({ app: { rateLimit: { max: 1000, anonymousMax: 2 } } });
    try {
      const who = await seedTenancy(t);
      const ip = "10.50.0.1";
      for (let i = 0; i < 5; i++)
        expect((await get(t, "/api/v1/users", "ApiKey wrong-guess", ip)).statusCode).toBe(401);
      expect((await get(t, "/api/v1/users", who.apiKey, ip)).statusCode).toBe(200);
    } finally {
      await t.close();
    }
  });
});

describe("requests with an invalid body", () => {
  it("count against the caller's limit like any other", async () => {
    const t = await startTestApp({ app: { rateLimit: { max: 3 } } });
    try {
      const who = await seedTenancy(t);
      const create = () =>
        t.call({ method: "POST", url: "/api/v1/api-tokens", headers: { authorization: who.apiKey }, payload: {} });
      for (let i = 0; i < 3; i++) expect((await create()).statusCode).toBe(400);
      expectRateLimited(await create());
    } finally {
      await t.close();
    }
  });
});
