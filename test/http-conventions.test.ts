import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { HEALTH_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

describe("HTTP conventions", () => {
  let t: TestApp;
  let admin: Tenancy;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 1000 } } });
    admin = await seedTenancy(t);
  });
  afterAll(() => t.close());

  it("answers an unknown /api route with a 404 envelope", async () => {
    const res = await t.call({ method: "GET", url: "/api/v1/no-such-thing", headers: { authorization: admin.bearer } });
    expect(res.statusCode).toBe(404);
    expect(res.json()).toEqual({
      code: "not_found",
      message: "Route GET /api/v1/no-such-thing does not exist",
      data: null,
    });
  });

  it("answers an unknown route under a service path outside /api in plain text", async () => {
    // Other paths outside the service's own belong to the dashboard (its index.html).
    for (const url of ["/go", "/postback", "/mcp/nowhere", "/active-version/x"]) {
      const res = await t.call({ method: "GET", url });
      expect(res.statusCode, url).toBe(404);
      expect(res.headers["content-type"], url).toMatch(/^text\/plain/);
    }
  });

  it("refuses malformed JSON with a validation_error envelope", async () => {
    const res = await t.call({
      method: "POST",
      url: "/api/v1/auth",
      headers: { "content-type": "application/json" },
      payload: '{"email": "a@b.c", ',
    });
    expect(res.statusCode).toBe(400);
    expect(res.json()).toMatchObject({ code: "validation_error", message: "Request body is not valid JSON" });
  });

  it("refuses a body over the limit with 413 in the envelope", async () => {
    const res = await t.call({
      method: "POST",
      url: "/api/v1/auth",
      headers: { "content-type": "application/json" },
      payload: JSON.stringify({ email: "a@b.c", password: "x".repeat(2 * 1024 * 1024) }),
    });
    expect(res.statusCode).toBe(413);
    expect(res.json()).toMatchObject({ code: "validation_error", message: "Request body is too large" });
  });

  it.each([
    [{ password: "secret" }, "email", "email is required"],
    [{ email: "not-an-email", password: "secret" }, "email", "email must be an email address"],
    [{ email: "a@b.co", password: "pw", extra: 1 }, "extra", "extra is not an accepted property"],
  ])("names the field at fault in a validation error (%j)", async (payload, path, message) => {
    const res = await t.call({ method: "POST", url: "/api/v1/auth", payload });
    expect(res.statusCode).toBe(400);
    const body = res.json();
    expect(body.code).toBe("validation_error");
    expect(body.message).toBe(message);
    expect(body.data.errors[0].path).toBe(path);
  });

  it("names a bad query parameter", async () => {
    const res = await t.call({
      method: "GET",
      url: "/api/v1/audit-log?limit=0",
      headers: { authorization: admin.bearer },
    });
    expect(res.statusCode).toBe(400);
    expect(res.json().message).toMatch(/^limit /);
    const date = await t.call({
      method: "GET",
      url: "/api/v1/audit-log?dateFrom=2026-02-30",
      headers: { authorization: admin.bearer },
    });
    expect(date.statusCode).toBe(400);
    expect(date.json().message).toBe("dateFrom is not a real date: '2026-02-30'");
  });

  it("checks the credential before validating input (401 before 400)", async () => {
    const res = await t.call({ method: "GET", url: "/api/v1/audit-log?limit=abc" });
    expect(res.statusCode).toBe(401);
    expect(res.json().code).toBe("unauthorized");
  });

  it("checks the permission before validating input or looking anything up (403 before 400/404)", async () => {
    const reader = await seedTenancy(t, { permissions: ["reports.read"] });
    const res = await t.call({
      method: "GET",
      url: "/api/v1/users/not-an-id",
      headers: { authorization: reader.bearer },
    });
    expect(res.statusCode).toBe(403);
    expect(res.json()).toMatchObject({ code: "forbidden", message: "Missing permission 'account.admin'" });
  });

  it("echoes a request id header, reusing the caller's", async () => {
    const fresh = await t.call({ method: "GET", url: "/api/health" });
    expect(fresh.headers["x-request-id"]).toMatch(/^req_[0-9a-z]+$/);
    const given = await t.call({ method: "GET", url: "/api/health", headers: { "x-request-id": "abc-123" } });
    expect(given.headers["x-request-id"]).toBe("abc-123");
  });

  it("pages lists with offset, limit and the total of the whole set", async () => {
    for (let i = 0; i < 4; i++) {
      await t.call({ method: "POST", url: "/api/v1/auth", payload: { email: admin.email, password: admin.password } });
    }
    const url = "/api/v1/audit-log?action=auth.login&limit=2";
    const first = await t.call({ method: "GET", url, headers: { authorization: admin.bearer } });
    expect(first.statusCode).toBe(200);
    const body = first.json();
    // One login by seedTenancy plus four here.
    expect(body.pagination).toEqual({ offset: 0, limit: 2, total: 5 });
    expect(body.data).toHaveLength(2);
    const last = await t.call({ method: "GET", url: `${url}&offset=4`, headers: { authorization: admin.bearer } });
    expect(last.json().pagination).toEqual({ offset: 4, limit: 2, total: 5 });
    expect(last.json().data).toHaveLength(1);
    const ids = new Set([...body.data, ...last.json().data].map((e: { id: string }) => e.id));
    expect(ids.size).toBe(3);
  });

  it("serves Prometheus metrics by route template", async () => {
    await t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: admin.bearer } });
    const res = await t.call({ method: "GET", url: "/metrics", headers: { authorization: `Bearer ${HEALTH_KEY}` } });
    expect(res.statusCode).toBe(200);
    expect(res.body).toMatch(/http_requests_total\{method="GET",route="\/api\/v1\/me",status="200"\} \d+/);
    expect(res.body).toMatch(/http_request_duration_seconds_bucket\{le="0.005",method="GET",route="\/api\/v1\/me"/);
  });
});

describe("rate limits and failures", () => {
  it("answers 429 with Retry-After and the envelope once a caller is over the limit", async () => {
    const t = await startTestApp({ app: { rateLimit: { max: 3, windowMs: 60_000 } } });
    try {
      const who = await seedTenancy(t);
      const call = () => t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: who.bearer } });
      for (let i = 0; i < 3; i++) expect((await call()).statusCode).toBe(200);
      const limited = await call();
      expect(limited.statusCode).toBe(429);
      expect(Number(limited.headers["retry-after"])).toBeGreaterThan(0);
      expect(limited.json()).toMatchObject({ code: "rate_limited", data: null });
      expect(limited.json().message).toMatch(/^Too many requests/);
    } finally {
      await t.close();
    }
  });

  it("turns an unexpected failure into a generic 500 that leaks nothing", async () => {
    const t = await startTestApp();
    try {
      const who = await seedTenancy(t);
      await t.testDb.db.close();
      const res = await t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: who.bearer } });
      expect(res.statusCode).toBe(500);
      const body = res.json();
      expect(body).toEqual({
        code: "internal_error",
        message: "Internal server error",
        data: { requestId: res.headers["x-request-id"] },
      });
      expect(res.body).not.toMatch(/closed|pool|pglite|stack|Error:/i);
    } finally {
      await t.close();
    }
  });
});
