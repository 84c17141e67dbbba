import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

// Two app instances on one database: two nodes of a cluster. On PostgreSQL they share nothing
// but the database; on PGlite they share the one in-process database.
describe("revoking a key across nodes", () => {
  let nodeA: TestApp;
  let nodeB: TestApp;
  let who: Tenancy;

  beforeAll(async () => {
    // A cache long enough that only the broadcast can explain node B refusing the key quickly.
    const env = { API_KEY_CACHE_TTL_S: "3600" };
    nodeA = await startTestApp({ env });
    const second =
      nodeA.testDb.kind === "postgres" ? { ...nodeA.testDb, db: nodeA.testDb.openAnother() } : nodeA.testDb;
    nodeB = await startTestApp({ env, testDb: second });
    who = await seedTenancy(nodeA);
  });
  afterAll(async () => {
    await nodeB.close();
    await nodeA.close();
  });

  const use = (node: TestApp) =>
    node.call({ method: "GET", url: "/api/v1/users", headers: { authorization: who.apiKey } });

  it("drops the key on every node in under a second", async () => {
    expect((await use(nodeA)).statusCode).toBe(200);
    expect((await use(nodeB)).statusCode).toBe(200);
    const deleted = await nodeA.call({
      method: "DELETE",
      url: `/api/v1/api-tokens/${who.apiKeyId}`,
      headers: { authorization: who.bearer },
    });
    expect(deleted.json().data.deleted).toBe(true);
    const started = Date.now();
    expect((await use(nodeA)).statusCode).toBe(401);
    let status = 200;
    while (Date.now() - started < 1000) {
      status = (await use(nodeB)).statusCode;
      if (status === 401) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(401);
    expect(Date.now() - started).toBeLessThan(1000);
  });

  it("applies an entitlement change on every node at once", async () => {
    const other = await seedTenancy(nodeA);
    const scopes = (node: TestApp) =>
      node.call({ method: "GET", url: "/api/v1/api-tokens/scopes", headers: { authorization: other.apiKey } });
    expect((await scopes(nodeB)).statusCode).toBe(200);
    const off = await nodeA.call({
      method: "PATCH",
      url: `/api/admin/tenants/${other.tenantId}`,
      headers: { authorization: "Bearer test-admin-key-0123456789" },
      payload: { entitlements: { apiTokens: false } },
    });
    expect(off.statusCode).toBe(200);
    const started = Date.now();
    let status = 200;
    while (Date.now() - started < 1000) {
      status = (await scopes(nodeB)).statusCode;
      if (status === 403) break;
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    expect(status).toBe(403);
  });
});
