import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ConfigError, loadConfig } from "../src/config.js";
import { newId } from "../src/platform/ids.js";
import {
  ADMIN_KEY,
  createKeyViaApi,
  HEALTH_KEY,
  seedTenancy,
  startTestApp,
  type Tenancy,
  type TestApp,
} from "./helpers/app.js";
import { clickThrough, seedCatalog } from "./helpers/catalog.js";
import { type Receiver, startReceiver } from "./helpers/receiver.js";
import { createHook, simulate, WEBHOOK_ENV } from "./helpers/webhooks.js";

// Every way into the service has a limit, not /api/v1 alone (docs/limits.md
// "Rate limits and quotas"). Limits are set small here; the defaults are tested in "configuration".

type Response = Awaited<ReturnType<TestApp["call"]>>;

function expectRetryAfter(res: Response, windowS = 60): void {
  const retryAfter = Number(res.headers["retry-after"]);
  expect(retryAfter).toBeGreaterThan(0);
  expect(retryAfter).toBeLessThanOrEqual(windowS);
}

/** A 429 in the envelope, as /api/v1 answers it. */
function expectEnvelope429(res: Response, message: RegExp, windowS = 60): void {
  expect(res.statusCode, res.body).toBe(429);
  expectRetryAfter(res, windowS);
  expect(res.json()).toMatchObject({ code: "rate_limited", data: null });
  expect(res.json().message).toMatch(message);
}

/** A 429 in the tracking routes' own JSON. */
function expectTracking429(res: Response, message: RegExp): void {
  expect(res.statusCode, res.body).toBe(429);
  expectRetryAfter(res);
  const body = JSON.parse(res.body);
  expect(body.status).toBe("error");
  expect(body.message).toMatch(message);
}

describe("limits on the other ways in", () => {
  let t: TestApp;
  let rx: Receiver;

  beforeAll(async () => {
    rx = await startReceiver();
    t = await startTestApp({
      env: WEBHOOK_ENV,
      app: {
        rateLimit: {
          max: 10_000,
          postbackPerMinute: 3,
          collectPerMinute: 4,
          adminFailuresPerMinute: 2,
          healthKeyFailuresPerMinute: 2,
          loginFailuresPerAccount: 2,
          loginFailuresPerIp: 3,
          simulatePerWebhookPerMinute: 2,
          maxApiKeysPerTenant: 3,
          maxPageViewsPerClick: 2,
        },
        // Buffered clicks are written only when something asks for them.
        clicks: { intervalMs: 3_600_000 },
      },
    });
  });
  afterAll(async () => {
    await t.close();
    await rx.close();
  });

  describe("POST|GET /postback/{key}", () => {
    const postback = (who: Tenancy, n: number) =>
      t.call({ method: "GET", url: `/postback/${who.postbackKey}?type=Signup&externalId=limit-${n}` });

    it("refuses a postback key's 4th call in the window, in the postback's JSON; another key is unaffected", async () => {
      const who = await seedTenancy(t);
      const other = await seedTenancy(t);
      for (let i = 0; i < 3; i++) expect((await postback(who, i)).statusCode).toBe(201);
      const refused = await postback(who, 3);
      expectTracking429(refused, /^Too many requests for this postback key: limit is 3 per 1 minute/);
      // The key is the budget, whatever the method or address.
      const posted = await t.call({
        method: "POST",
        url: `/postback/${who.postbackKey}`,
        payload: { type: "Signup", externalId: "limit-post" },
        remoteAddress: "10.61.0.9",
      });
      expect(posted.statusCode).toBe(429);
      expect(await t.ctx.db.query("select id from conversions where tenant_id = $1", [who.tenantId])).toHaveLength(3);
      expect((await postback(other, 0)).statusCode).toBe(201);
    });
  });

  describe("POST /collect", () => {
    const collect = (clickId: string, ip: string) =>
      t.call({
        method: "POST",
        url: "/collect",
        headers: { origin: "https://brand.example" },
        payload: { clickId, url: "https://brand.example/landing" },
        remoteAddress: ip,
      });

    it("refuses an address's 5th page view in the window, with CORS so the page can read it", async () => {
      for (let i = 0; i < 4; i++) expect((await collect(`no-such-click-${i}`, "10.62.0.1")).statusCode).toBe(404);
      const refused = await collect("no-such-click", "10.62.0.1");
      expectTracking429(refused, /^Too many requests from this address: limit is 4 per 1 minute/);
      expect(refused.headers["access-control-allow-origin"]).toBe("*");
      expect((await collect("no-such-click", "10.62.0.2")).statusCode).toBe(404);
    });

    it("answers a forged click id that looks a moment old at once (404), not after a wait", async () => {
      const forged = newId("clk");
      const started = Date.now();
      const res = await collect(forged, "10.62.0.3");
      const elapsed = Date.now() - started;
      expect(res.statusCode, res.body).toBe(404);
      expect(JSON.parse(res.body).message).toContain(forged);
      // It used to be held for 2 s polling for the click; nothing here can hold it that long.
      expect(elapsed).toBeLessThan(1000);
    });

    it("keeps at most the configured page views per click (409 beyond), concurrent views included", async () => {
      const who = await seedTenancy(t);
      const cat = await seedCatalog(t, who);
      const clickId = await clickThrough(t, cat);
      // Still in this node's buffer: /collect writes it first.
      expect(t.ctx.tracking.clicks.holds(clickId)).toBe(true);
      expect((await collect(clickId, "10.62.1.1")).statusCode).toBe(201);
      expect((await collect(clickId, "10.62.1.2")).statusCode).toBe(201);
      const refused = await collect(clickId, "10.62.1.3");
      expect(refused.statusCode, refused.body).toBe(409);
      expect(JSON.parse(refused.body)).toMatchObject({
        status: "error",
        message: `Click '${clickId}' already has 2 page views, the most kept per click`,
      });
      expect(refused.headers["access-control-allow-origin"]).toBe("*");

      const next = await clickThrough(t, cat);
      const answers = await Promise.all(Array.from({ length: 6 }, (_, i) => collect(next, `10.62.2.${i + 1}`)));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 409, 409, 409, 409]);
      const stored = await t.ctx.db.query("select id from page_views where click_id = any($1::text[])", [
        [clickId, next],
      ]);
      expect(stored).toHaveLength(4);
    });
  });

  describe("the admin credential", () => {
    const admin = (ip: string, key: string) =>
      t.call({ method: "GET", url: "/api/admin/jobs", headers: { authorization: `Bearer ${key}` }, remoteAddress: ip });

    it("refuses an address after 2 wrong keys, even with the right one; other addresses are unaffected", async () => {
      expect((await admin("10.63.0.1", "wrong-admin-key-000000")).statusCode).toBe(401);
      expect((await admin("10.63.0.1", "wrong-admin-key-111111")).statusCode).toBe(401);
      expectEnvelope429(
        await admin("10.63.0.1", ADMIN_KEY),
        /^Too many failed admin credentials from this address: limit is 2 per 1 minute/,
      );
      expect((await admin("10.63.0.2", ADMIN_KEY)).statusCode).toBe(200);
      // Right keys are not failures: an address that only uses the right key is never refused.
      for (let i = 0; i < 4; i++) expect((await admin("10.63.0.3", ADMIN_KEY)).statusCode).toBe(200);
    });

    it("counts only guesses: no credential, another scheme or an empty bearer could never succeed", async () => {
      for (const authorization of [undefined, `ApiKey ${ADMIN_KEY}`, "Bearer ", "Basic abc"]) {
        const res = await t.call({
          method: "GET",
          url: "/api/admin/jobs",
          headers: authorization === undefined ? {} : { authorization },
          remoteAddress: "10.63.0.4",
        });
        expect(res.statusCode).toBe(401);
      }
      expect((await admin("10.63.0.4", ADMIN_KEY)).statusCode).toBe(200);
    });
  });

  describe("the health key", () => {
    const detailed = (ip: string, key: string) =>
      t.call({ method: "GET", url: "/api/health/detailed", headers: { "x-health-key": key }, remoteAddress: ip });

    it("refuses an address after 2 wrong keys, even with the right one; other addresses are unaffected", async () => {
      expect((await detailed("10.64.0.1", "wrong-1")).statusCode).toBe(401);
      expect((await detailed("10.64.0.1", "wrong-2")).statusCode).toBe(401);
      expectEnvelope429(
        await detailed("10.64.0.1", HEALTH_KEY),
        /^Too many wrong health keys from this address: limit is 2 per 1 minute/,
      );
      expect((await detailed("10.64.0.2", HEALTH_KEY)).statusCode).toBe(200);
      // A missing or empty header is no guess and costs nothing.
      for (let i = 0; i < 3; i++) {
        const missing = await t.call({ method: "GET", url: "/api/health/detailed", remoteAddress: "10.64.0.3" });
        expect(missing.statusCode).toBe(401);
        expect((await detailed("10.64.0.3", "")).statusCode).toBe(401);
      }
      expect((await detailed("10.64.0.3", HEALTH_KEY)).statusCode).toBe(200);
    });
  });

  describe("sign-in failures", () => {
    const signIn = (email: string, password: string, ip: string) =>
      t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password }, remoteAddress: ip });

    it("refuse an account after 2 failures from any addresses, the right password included", async () => {
      const who = await seedTenancy(t);
      const other = await seedTenancy(t);
      expect((await signIn(who.email, "wrong password 1", "10.65.0.1")).statusCode).toBe(401);
      expect((await signIn(who.email.toUpperCase(), "wrong password 2", "10.65.0.2")).statusCode).toBe(401);
      expectEnvelope429(
        await signIn(who.email, who.password, "10.65.0.3"),
        /^Too many failed sign-ins for this account: limit is 2 per 15 minutes/,
        900,
      );
      // Another account from the same address signs in.
      expect((await signIn(other.email, other.password, "10.65.0.3")).statusCode).toBe(200);
    });

    it("refuse an address after 3 failures across accounts; the accounts still sign in elsewhere", async () => {
      const who = await seedTenancy(t);
      for (let i = 0; i < 3; i++) {
        expect((await signIn(`nobody-${i}@example.com`, "guess", "10.65.1.1")).statusCode).toBe(401);
      }
      expectEnvelope429(
        await signIn(who.email, who.password, "10.65.1.1"),
        /^Too many failed sign-ins from this address: limit is 3 per 15 minutes/,
        900,
      );
      expect((await signIn(who.email, who.password, "10.65.1.2")).statusCode).toBe(200);
    });
  });

  describe("API keys per tenant", () => {
    const create = (who: Tenancy, name: string) =>
      t.call({ method: "POST", url: "/api/v1/api-tokens", headers: { authorization: who.bearer }, payload: { name } });

    it("refuses a 4th unexpired key with 409 naming the limit; expired and deleted keys make room", async () => {
      const who = await seedTenancy(t); // holds one key already
      expect((await create(who, "Second key")).statusCode).toBe(201);
      const third = await create(who, "Third key");
      expect(third.statusCode).toBe(201);
      const refused = await create(who, "Fourth key");
      expect(refused.statusCode, refused.body).toBe(409);
      expect(refused.json()).toMatchObject({ code: "conflict", data: null });
      expect(refused.json().message).toBe(
        "This tenant already has 3 unexpired API keys, the most allowed; delete one before creating another",
      );

      // An expired key no longer counts.
      await t.ctx.db.query("update api_tokens set expiration_date = $2 where id = $1", [
        who.apiKeyId,
        new Date(t.clock.now().getTime() - 1000),
      ]);
      expect((await create(who, "Fourth key")).statusCode).toBe(201);
      expect((await create(who, "Fifth key")).statusCode).toBe(409);
      // Revoking one (delete) makes room as well.
      const deleted = await t.call({
        method: "DELETE",
        url: `/api/v1/api-tokens/${third.json().data.id}`,
        headers: { authorization: who.bearer },
      });
      expect(deleted.json().data.deleted).toBe(true);
      expect((await create(who, "Fifth key")).statusCode).toBe(201);
    });

    it("lets concurrent creates pass the limit no further", async () => {
      const who = await seedTenancy(t);
      const answers = await Promise.all(Array.from({ length: 5 }, (_, i) => create(who, `Concurrent ${i}`)));
      expect(answers.map((a) => a.statusCode).sort()).toEqual([201, 201, 409, 409, 409]);
      const [count] = await t.ctx.db.query<{ n: number }>(
        "select count(*)::int as n from api_tokens where tenant_id = $1",
        [who.tenantId],
      );
      expect(count?.n).toBe(3);
    });
  });

  describe("Simulate", () => {
    it("allows 2 per webhook in the window (429 beyond); another webhook has its own budget", async () => {
      const who = await seedTenancy(t);
      const first = await createHook(t, who.bearer, { url: `${rx.base}/simulate-limit-a` });
      const second = await createHook(t, who.bearer, { name: "Second", url: `${rx.base}/simulate-limit-b` });
      for (let i = 0; i < 2; i++) expect((await simulate(t, who.bearer, first.id)).statusCode).toBe(202);
      expectEnvelope429(
        await simulate(t, who.bearer, first.id),
        /^Too many simulations of this webhook: limit is 2 per 1 minute/,
      );
      const [events] = await t.ctx.db.query<{ n: number }>(
        "select count(*)::int as n from webhook_events where webhook_id = $1",
        [first.id],
      );
      expect(events?.n).toBe(2);
      expect((await simulate(t, who.bearer, second.id)).statusCode).toBe(202);
    });
  });
});

describe("/mcp and /api/v1 share an API key's budget", () => {
  let t: TestApp;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 3 } } });
  });
  afterAll(() => t.close());

  const reportsKey = async () => (await seedTenancy(t, { key: { scopes: ["reports.read"] } })).apiKey;
  const api = (key: string) =>
    t.call({ method: "GET", url: "/api/v1/reports/events/performance", headers: { authorization: key } });
  const mcp = (key: string, calls: number | null) => {
    const one = (id: number) => ({ jsonrpc: "2.0", id, method: "ping" });
    return t.call({
      method: "POST",
      url: "/mcp",
      headers: { authorization: key, accept: "application/json, text/event-stream" },
      payload: calls === null ? one(1) : Array.from({ length: calls }, (_, i) => one(i + 1)),
    });
  };

  it("refuses /mcp once the key's /api/v1 calls used the budget, in JSON-RPC with Retry-After, and meters it", async () => {
    const who = await seedTenancy(t, { key: { scopes: ["reports.read"] } });
    for (let i = 0; i < 3; i++) expect((await api(who.apiKey)).statusCode).not.toBe(429);
    expect((await api(who.apiKey)).statusCode).toBe(429);
    const refused = await mcp(who.apiKey, null);
    expect(refused.statusCode, refused.body).toBe(429);
    expectRetryAfter(refused);
    expect(JSON.parse(refused.body)).toEqual({
      jsonrpc: "2.0",
      error: { code: -32029, message: "Too many requests: limit is 3 per 1 minute; retry later" },
      id: null,
    });
    await t.ctx.usage.flush();
    const [row] = await t.ctx.db.query<{ n: number }>(
      "select coalesce(sum(calls), 0)::int as n from api_usage where token_id = $1 and route = '/mcp' and status = 429",
      [who.apiKeyId],
    );
    expect(row?.n).toBe(1);
  });

  it("counts each call of a JSON-RPC batch: a batch of 3 spends the budget, a batch of 4 is refused", async () => {
    const key = await reportsKey();
    expect((await mcp(key, 3)).statusCode).not.toBe(429);
    expect((await api(key)).statusCode).toBe(429);

    const fresh = await reportsKey();
    expect((await mcp(fresh, 4)).statusCode).toBe(429);
    const single = await reportsKey();
    expect((await mcp(single, null)).statusCode).toBe(200);
    for (let i = 0; i < 2; i++) expect((await api(single)).statusCode).not.toBe(429);
    expect((await api(single)).statusCode).toBe(429);
  });

  it("leaves a second key of the tenant its own budget", async () => {
    const who = await seedTenancy(t, { key: { scopes: ["reports.read"] } });
    expect((await mcp(who.apiKey, 3)).statusCode).not.toBe(429);
    expect((await mcp(who.apiKey, null)).statusCode).toBe(429);
    const other = await createKeyViaApi(t, who, "Other reports key");
    expect((await api(other.apiKey)).statusCode).not.toBe(429);
  });
});

describe("configuration", () => {
  const base = { SEED_DEMO: "false" };

  it("has generous defaults", () => {
    expect(loadConfig(base).wayInLimits).toEqual({
      postbackPerMinute: 6000,
      collectPerMinute: 3000,
      adminFailuresPerMinute: 20,
      healthKeyFailuresPerMinute: 20,
      loginFailuresPerAccount: 10,
      loginFailuresPerIp: 100,
      loginFailureWindowMs: 900_000,
      simulatePerWebhookPerMinute: 10,
      maxApiKeysPerTenant: 100,
      maxPageViewsPerClick: 100,
      // The embedded database has one node: nothing to wait for.
      collectClickWaitMs: 0,
      clickRatePerIpPerMinute: 600,
      trackersPerTenantPerHour: 1000,
      authFailuresPerIpPerMinute: 100,
    });
    expect(loadConfig({ ...base, DATABASE_URL: "postgres://db/x" }).wayInLimits.collectClickWaitMs).toBe(500);
  });

  it("reads each limit from its variable", () => {
    const limits = loadConfig({
      ...base,
      POSTBACK_RATE_LIMIT_PER_MINUTE: "1",
      COLLECT_RATE_LIMIT_PER_MINUTE: "2",
      ADMIN_AUTH_FAILURES_PER_MINUTE: "3",
      HEALTH_KEY_FAILURES_PER_MINUTE: "4",
      LOGIN_FAILURES_PER_ACCOUNT: "5",
      LOGIN_FAILURES_PER_IP: "6",
      LOGIN_FAILURE_WINDOW_S: "7",
      SIMULATE_PER_WEBHOOK_PER_MINUTE: "8",
      MAX_API_KEYS_PER_TENANT: "9",
      MAX_PAGE_VIEWS_PER_CLICK: "10",
      COLLECT_CLICK_WAIT_MS: "11",
      CLICK_RATE_PER_IP_PER_MINUTE: "12",
      TRACKERS_PER_TENANT_PER_HOUR: "13",
      AUTH_FAILURES_PER_IP_PER_MINUTE: "14",
    }).wayInLimits;
    expect(limits).toEqual({
      postbackPerMinute: 1,
      collectPerMinute: 2,
      adminFailuresPerMinute: 3,
      healthKeyFailuresPerMinute: 4,
      loginFailuresPerAccount: 5,
      loginFailuresPerIp: 6,
      loginFailureWindowMs: 7000,
      simulatePerWebhookPerMinute: 8,
      maxApiKeysPerTenant: 9,
      maxPageViewsPerClick: 10,
      collectClickWaitMs: 11,
      clickRatePerIpPerMinute: 12,
      trackersPerTenantPerHour: 13,
      authFailuresPerIpPerMinute: 14,
    });
  });

  it.each([
    ["POSTBACK_RATE_LIMIT_PER_MINUTE", "0"],
    ["MAX_API_KEYS_PER_TENANT", "lots"],
    ["COLLECT_CLICK_WAIT_MS", "2001"],
    ["CLICK_RATE_PER_IP_PER_MINUTE", "0"],
    ["TRACKERS_PER_TENANT_PER_HOUR", "-1"],
    ["AUTH_FAILURES_PER_IP_PER_MINUTE", "many"],
  ])("refuses a bad %s naming it", (name, value) => {
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(ConfigError);
    expect(() => loadConfig({ ...base, [name]: value })).toThrow(name);
  });
});
