import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SignedInPeople } from "../src/features/auth/index.js";
import { ADMIN_KEY, HEALTH_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

// Signed-in people are cached like API keys (src/features/auth/signed-in-people.ts): a person
// disabled or given other permissions through the operator API is refused or changed on the
// next request, on the node that changed them and, through the auth_cache broadcast, on every
// other node. Two app instances on one database are two nodes (as in revocation.test.ts).

describe("signed-in people cached across nodes", { timeout: 180_000 }, () => {
  let nodeA: TestApp;
  let nodeB: TestApp;

  beforeAll(async () => {
    // A cache long enough that only the broadcast can explain a node seeing a change quickly.
    const env = { API_KEY_CACHE_TTL_S: "3600" };
    nodeA = await startTestApp({ env });
    const second =
      nodeA.testDb.kind === "postgres" ? { ...nodeA.testDb, db: nodeA.testDb.openAnother() } : nodeA.testDb;
    nodeB = await startTestApp({ env, testDb: second });
  }, 120_000);
  afterAll(async () => {
    await nodeB?.close();
    await nodeA?.close();
  });

  const me = (node: TestApp, who: Tenancy) =>
    node.call({ method: "GET", url: "/api/v1/me", headers: { authorization: who.bearer } });
  const admin = (options: InjectOptions) =>
    nodeA.call({ ...options, headers: { authorization: `Bearer ${ADMIN_KEY}` } });

  /** The status `node` answers within a second, polling until it is `wanted`. */
  async function statusWithin(call: () => Promise<{ statusCode: number }>, wanted: number): Promise<number> {
    const started = Date.now();
    let status = (await call()).statusCode;
    while (status !== wanted && Date.now() - started < 1000) {
      await new Promise((resolve) => setTimeout(resolve, 20));
      status = (await call()).statusCode;
    }
    return status;
  }

  it("serves a signed-in person from the cache until a change made behind the API's back ages out", async () => {
    const who = await seedTenancy(nodeA);
    const name = (await me(nodeA, who)).json().data.name;
    expect(name).toMatch(/^Person /);
    // Written straight to the table: no broadcast, so the cached person stands until the TTL.
    await nodeA.ctx.db.query("update users set name = 'Renamed directly' where id = $1", [who.userId]);
    expect((await me(nodeA, who)).json().data.name).toBe(name);
    nodeA.clock.advance(3600 * 1000 + 1);
    // The token is still valid (12 hours); only the person is looked up again.
    expect((await me(nodeA, who)).json().data.name).toBe("Renamed directly");
  });

  it("refuses a disabled person on the next request, on this node and on the other", async () => {
    const who = await seedTenancy(nodeA);
    expect((await me(nodeA, who)).statusCode).toBe(200);
    expect((await me(nodeB, who)).statusCode).toBe(200);
    const disabled = await admin({
      method: "PATCH",
      url: `/api/admin/users/${who.userId}`,
      payload: { disabled: true },
    });
    expect(disabled.statusCode, disabled.body).toBe(200);

    const refused = await me(nodeA, who);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().message).toBe("Bearer token's user no longer exists or is disabled");
    expect(await statusWithin(() => me(nodeB, who), 401)).toBe(401);

    const enabled = await admin({
      method: "PATCH",
      url: `/api/admin/users/${who.userId}`,
      payload: { disabled: false },
    });
    expect(enabled.statusCode).toBe(200);
    expect((await me(nodeA, who)).statusCode).toBe(200);
    expect(await statusWithin(() => me(nodeB, who), 200)).toBe(200);
  });

  it("applies changed permissions on the next request, on this node and on the other", async () => {
    const who = await seedTenancy(nodeA, { permissions: ["reports.read"] });
    const conversions = (node: TestApp) =>
      node.call({ method: "GET", url: "/api/v1/conversions", headers: { authorization: who.bearer } });
    expect((await conversions(nodeA)).statusCode).toBe(403);
    expect((await conversions(nodeB)).statusCode).toBe(403);
    expect((await me(nodeB, who)).json().data.permissions).toEqual(["reports.read"]);

    const granted = await admin({
      method: "PATCH",
      url: `/api/admin/users/${who.userId}`,
      payload: { permissions: ["reports.read", "conversions.read"] },
    });
    expect(granted.statusCode, granted.body).toBe(200);
    expect((await conversions(nodeA)).statusCode).toBe(200);
    expect(await statusWithin(() => conversions(nodeB), 200)).toBe(200);
    expect((await me(nodeB, who)).json().data.permissions).toEqual(["conversions.read", "reports.read"]);

    const withdrawn = await admin({
      method: "PATCH",
      url: `/api/admin/users/${who.userId}`,
      payload: { permissions: ["reports.read"] },
    });
    expect(withdrawn.statusCode).toBe(200);
    expect((await conversions(nodeA)).statusCode).toBe(403);
    expect(await statusWithin(() => conversions(nodeB), 403)).toBe(403);
  });

  it("applies a tenant's entitlement change to its signed-in people on every node", async () => {
    const who = await seedTenancy(nodeA);
    const tokens = (node: TestApp) =>
      node.call({ method: "GET", url: "/api/v1/api-tokens", headers: { authorization: who.bearer } });
    expect((await tokens(nodeA)).statusCode).toBe(200);
    expect((await tokens(nodeB)).statusCode).toBe(200);
    const off = await admin({
      method: "PATCH",
      url: `/api/admin/tenants/${who.tenantId}`,
      payload: { entitlements: { apiTokens: false } },
    });
    expect(off.statusCode, off.body).toBe(200);
    expect((await tokens(nodeA)).statusCode).toBe(403);
    expect(await statusWithin(() => tokens(nodeB), 403)).toBe(403);
  });

  it("signs a token out on every node, one started later included, and only that token", async () => {
    const who = await seedTenancy(nodeA);
    const again = await nodeA.call({
      method: "POST",
      url: "/api/v1/auth",
      payload: { email: who.email, password: who.password },
    });
    const other = { ...who, bearer: `Bearer ${again.json().data.token}` };
    expect(other.bearer).not.toBe(who.bearer);
    // Cached on both nodes, with a cache long enough that only the sign-out explains a refusal.
    expect((await me(nodeA, who)).statusCode).toBe(200);
    expect((await me(nodeB, who)).statusCode).toBe(200);

    const signOut = (node: TestApp, authorization?: string) =>
      node.call({ method: "DELETE", url: "/api/v1/auth", headers: authorization ? { authorization } : {} });
    expect((await signOut(nodeA)).statusCode).toBe(401);
    const byKey = await signOut(nodeA, who.apiKey);
    expect(byKey.statusCode).toBe(403);
    const out = await signOut(nodeA, who.bearer);
    expect(out.statusCode, out.body).toBe(200);
    expect(out.json().data).toEqual({ signedOut: true });

    const refused = await me(nodeA, who);
    expect(refused.statusCode).toBe(401);
    expect(refused.json().message).toBe("Bearer token is invalid or expired");
    expect(await statusWithin(() => me(nodeB, who), 401)).toBe(401);
    expect((await signOut(nodeB, who.bearer)).statusCode).toBe(401);
    // The person's other session goes on.
    expect((await me(nodeA, other)).statusCode).toBe(200);
    expect((await me(nodeB, other)).statusCode).toBe(200);

    // Stored, not only heard: a node that starts afterwards (or restarts) refuses it too.
    const third = nodeA.testDb.kind === "postgres" ? { ...nodeA.testDb, db: nodeA.testDb.openAnother() } : nodeA.testDb;
    const nodeC = await startTestApp({ env: { API_KEY_CACHE_TTL_S: "3600" }, testDb: third });
    try {
      expect((await me(nodeC, who)).statusCode).toBe(401);
      expect((await me(nodeC, other)).statusCode).toBe(200);
    } finally {
      await nodeC.close();
    }
    // Only the SHA-256 of the token is stored, until the token would have expired.
    const token = who.bearer.slice("Bearer ".length);
    const rows = await nodeA.ctx.db.query<{ token_hash: string; expires_at: Date }>(
      "select token_hash, expires_at from revoked_sessions where user_id = $1",
      [who.userId],
    );
    expect(rows).toHaveLength(1);
    expect(rows[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
    expect(JSON.stringify(rows)).not.toContain(token);
    const audit = await nodeA.ctx.db.query("select 1 from audit_log where action = 'auth.logout' and actor_id = $1", [
      who.userId,
    ]);
    expect(audit).toHaveLength(1);
  });

  it("forgets a signed-out token once it has expired (retention)", async () => {
    const who = await seedTenancy(nodeA);
    const out = await nodeA.call({ method: "DELETE", url: "/api/v1/auth", headers: { authorization: who.bearer } });
    expect(out.statusCode).toBe(200);
    const stored = () =>
      nodeA.ctx.db.query("select 1 from revoked_sessions where user_id = $1", [who.userId]).then((r) => r.length);
    const retention = () => admin({ method: "POST", url: "/api/admin/jobs/retention/run", payload: {} });
    expect((await retention()).statusCode).toBeLessThan(300);
    expect(await stored()).toBe(1);
    nodeA.clock.advance(12 * 3600 * 1000 + 1000);
    expect((await retention()).statusCode).toBeLessThan(300);
    expect(await stored()).toBe(0);
    expect((await me(nodeA, who)).statusCode).toBe(401);
  });

  it("refuses an expired token even while it and its person are cached", async () => {
    const who = await seedTenancy(nodeA);
    expect((await me(nodeA, who)).statusCode).toBe(200);
    nodeA.clock.advance(12 * 3600 * 1000);
    const expired = await me(nodeA, who);
    expect(expired.statusCode).toBe(401);
    expect(expired.json().message).toBe("Bearer token is invalid or expired");
  });

  it("reports its size in the metrics", async () => {
    const who = await seedTenancy(nodeA);
    expect((await me(nodeA, who)).statusCode).toBe(200);
    const metrics = await nodeA.call({ method: "GET", url: "/metrics", headers: { "x-health-key": HEALTH_KEY } });
    expect(metrics.statusCode).toBe(200);
    const bytes = Number(/^auth_signed_in_cache_bytes (\d+)$/m.exec(metrics.body)?.[1]);
    const entries = Number(/^auth_signed_in_cache_entries (\d+)$/m.exec(metrics.body)?.[1]);
    expect(entries).toBeGreaterThanOrEqual(2);
    expect(bytes).toBeGreaterThan(entries * 200);
    expect(metrics.body).toMatch(/^auth_signed_in_cache_evictions_total 0$/m);
  });

  it("stays within its byte bound, the oldest entries going first", async () => {
    const people: Tenancy[] = [];
    for (let i = 0; i < 4; i++) people.push(await seedTenancy(nodeA));
    const maxBytes = 2000;
    const cache = new SignedInPeople(nodeA.ctx.db, nodeA.clock, nodeA.ctx.jwt, { ttlMs: 60_000, maxBytes });
    for (const who of people) {
      const token = who.bearer.slice("Bearer ".length);
      const session = await cache.verify(token);
      expect(session?.userId).toBe(who.userId);
      expect((await cache.person(who.userId))?.userId).toBe(who.userId);
      expect(cache.cached(token)?.userId).toBe(who.userId);
      expect(cache.bytes).toBeLessThanOrEqual(maxBytes);
    }
    const held = people.filter((who) => cache.cached(who.bearer.slice("Bearer ".length)) !== undefined);
    // The latest person is held; the first ones were evicted to make room.
    expect(held.map((who) => who.userId)).toContain(people[3]?.userId);
    expect(held.length).toBeLessThan(people.length);
    expect(cache.cached(people[0]?.bearer.slice("Bearer ".length) ?? "")).toBeUndefined();
  });
});
