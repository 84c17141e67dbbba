import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";
import { signInPerson } from "./helpers/webhooks.js";

// The two answers the dashboard's MCP page reads: how to connect an MCP client (GET /mcp, from
// the MCP feature's own tools and scopes) and, for account admins, the service's health and build
// (GET /service: the /api/health summary and /active-version, through /api/v1).

let t: TestApp;
let who: Tenancy;

beforeAll(async () => {
  t = await startTestApp();
  who = await seedTenancy(t);
});
afterAll(() => t?.close());

const get = (url: string, authorization: string) => t.call({ method: "GET", url, headers: { authorization } });

describe("GET /api/v1/mcp", () => {
  it("names the endpoint, the header, the scopes the endpoint takes and its tools", async () => {
    const res = await get("/api/v1/mcp", who.bearer);
    expect(res.statusCode).toBe(200);
    const data = res.json().data;
    expect(data).toMatchObject({
      path: "/mcp",
      authorization: "ApiKey <key>",
      scopes: ["reports.read", "reports.update"],
    });
    expect(data.tools.map((tool: { name: string }) => tool.name)).toEqual([
      "list_reports",
      "describe_report",
      "run_report",
    ]);
    for (const tool of data.tools) expect(tool.description.length).toBeGreaterThan(10);
  });

  it("is refused without reports.read", async () => {
    const person = await signInPerson(t, who.tenantId, { name: "Catalog only", permissions: ["catalog.read"] });
    expect((await get("/api/v1/mcp", person.bearer)).statusCode).toBe(403);
  });
});

describe("GET /api/v1/service", () => {
  it("answers an account admin the health summary and the deployed build, as the public endpoints do", async () => {
    const res = await get("/api/v1/service", who.bearer);
    expect(res.statusCode).toBe(200);
    const { health, build } = res.json().data;
    const publicHealth = (await t.call({ method: "GET", url: "/api/health" })).json().data;
    expect(Object.keys(health.components).sort()).toEqual(Object.keys(publicHealth.components).sort());
    expect(health.components.database.status).toBe("healthy");
    expect(health).not.toHaveProperty("checks");
    expect(build).toEqual((await t.call({ method: "GET", url: "/active-version" })).json());
  });

  it("is refused to a person who is no account admin", async () => {
    const person = await signInPerson(t, who.tenantId, { name: "Report reader", permissions: ["reports.read"] });
    expect((await get("/api/v1/service", person.bearer)).statusCode).toBe(403);
  });
});
