import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { conflictResponses, ErrorEnvelope, errorResponses } from "../src/platform/http/envelope.js";
import { seedTenancy, startTestApp, type TestApp } from "./helpers/app.js";

interface Parameter {
  in: string;
  name: string;
  required?: boolean;
  schema?: { default?: unknown };
}
interface OpenApiDoc {
  paths: Record<string, Record<string, { parameters?: Parameter[]; responses?: Record<string, unknown> }>>;
}

describe("the OpenAPI document's parameters", () => {
  let t: TestApp;
  let doc: OpenApiDoc;

  beforeAll(async () => {
    t = await startTestApp();
    const res = await t.call({ method: "GET", url: "/api/swagger/v1/swagger.json" });
    doc = JSON.parse(res.body) as OpenApiDoc;
  });
  afterAll(() => t.close());

  function parameter(path: string, name: string): Parameter | undefined {
    return doc.paths[path]?.get?.parameters?.find((p) => p.name === name);
  }

  it.each([
    ["/api/v1/users", "offset", 0],
    ["/api/v1/users", "limit", 50],
    ["/api/v1/issues", "offset", 0],
    ["/api/v1/issues", "limit", 50],
    ["/api/v1/traffic-controls/api-usage/timeseries", "interval", "hour"],
    ["/api/v1/traffic-controls/api-usage/breakdown", "groupBy", "endpoint"],
  ])("marks %s ?%s optional, with its default", (path, name, value) => {
    expect(parameter(path, name)).toMatchObject({ in: "query", required: false, schema: { default: value } });
  });

  it("leaves no query parameter with a default marked required anywhere", () => {
    const wrong = Object.entries(doc.paths).flatMap(([path, item]) =>
      Object.entries(item).flatMap(([method, operation]) =>
        (operation.parameters ?? [])
          .filter((p) => p.in === "query" && p.required === true && p.schema?.default !== undefined)
          .map((p) => `${method.toUpperCase()} ${path} ?${p.name}`),
      ),
    );
    expect(wrong).toEqual([]);
  });

  it("keeps path ids required", () => {
    expect(doc.paths["/api/v1/users/{id}"]?.get?.parameters?.find((p) => p.name === "id")).toMatchObject({
      in: "path",
      required: true,
    });
  });

  it.each([
    ["/api/v1/api-tokens", "post"],
    ["/api/v1/brands", "post"],
    ["/api/v1/brands/{id}", "patch"],
    ["/api/v1/conversions/outgoing/webhooks/settings", "post"],
    ["/api/v1/notifications/webhooks", "post"],
    ["/api/v1/saved-reports", "post"],
    ["/api/v1/saved-reports/{id}", "patch"],
  ])("documents the 409 of %s (%s), which refuses duplicates or limits with it", (path, method) => {
    expect(Object.keys(doc.paths[path]?.[method]?.responses ?? {})).toContain("409");
  });

  it("still fills the defaults for the handler", async () => {
    const who = await seedTenancy(t);
    const res = await t.call({ method: "GET", url: "/api/v1/users", headers: { authorization: who.bearer } });
    expect(res.statusCode).toBe(200);
    expect(res.json().pagination).toEqual({ offset: 0, limit: 50, total: 1 });
  });
});

describe("conflictResponses", () => {
  it("declares 409 beside every error answer of errorResponses", () => {
    expect(conflictResponses).toEqual({ ...errorResponses, 409: ErrorEnvelope });
  });
});
