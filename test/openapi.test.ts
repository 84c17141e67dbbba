import { compileErrors, validate } from "@readme/openapi-parser";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, startTestApp, type TestApp } from "./helpers/app.js";

/** Only the parts of an OpenAPI 3.1 document these tests read. */
interface MediaType {
  schema?: unknown;
}
interface ResponseObject {
  content?: Record<string, MediaType>;
}
interface Operation {
  responses?: Record<string, ResponseObject>;
}
interface SecurityScheme {
  type: string;
  in?: string;
  name?: string;
  scheme?: string;
  bearerFormat?: string;
}
interface OpenApiDoc {
  openapi: string;
  paths: Record<string, Record<string, Operation>>;
  components?: { securitySchemes?: Record<string, SecurityScheme> };
}

type ValidatorInput = Exclude<Parameters<typeof validate>[0], string>;

const CLIENT_DOC = "/api/swagger/v1/swagger.json";
const ADMIN_DOC = "/api/swagger/admin/swagger.json";
const HTTP_METHODS = new Set(["get", "put", "post", "delete", "options", "head", "patch", "trace"]);

async function fetchDoc(t: TestApp, url: string): Promise<{ doc: OpenApiDoc; body: string }> {
  // The admin document is behind the admin key, as the admin routes are.
  const headers = url === ADMIN_DOC ? { authorization: `Bearer ${ADMIN_KEY}` } : {};
  const res = await t.app.inject({ method: "GET", url, headers });
  expect(res.statusCode, res.body).toBe(200);
  expect(res.headers["content-type"]).toMatch(/application\/json/);
  return { doc: JSON.parse(res.body) as OpenApiDoc, body: res.body };
}

/** Validates a fresh copy: the parser dereferences the document it is given. */
async function expectValid(body: string): Promise<void> {
  const result = await validate(JSON.parse(body) as ValidatorInput);
  expect(result.valid, result.valid ? "" : compileErrors(result)).toBe(true);
  expect(result.specification).toBe("OpenAPI");
}

function operations(doc: OpenApiDoc): { id: string; operation: Operation }[] {
  return Object.entries(doc.paths).flatMap(([path, item]) =>
    Object.entries(item)
      .filter(([method]) => HTTP_METHODS.has(method))
      .map(([method, operation]) => ({ id: `${method.toUpperCase()} ${path}`, operation })),
  );
}

function hasResponseSchema(operation: Operation): boolean {
  return Object.values(operation.responses ?? {}).some((response) =>
    Object.values(response.content ?? {}).some((media) => media.schema !== undefined),
  );
}

describe("OpenAPI documents", () => {
  let t: TestApp;
  let client: OpenApiDoc;
  let clientBody: string;
  beforeAll(async () => {
    t = await startTestApp();
    ({ doc: client, body: clientBody } = await fetchDoc(t, CLIENT_DOC));
  });
  afterAll(() => t.close());

  describe("client document", () => {
    it("is a valid OpenAPI 3.1 document", async () => {
      expect(client.openapi).toMatch(/^3\.1\./);
      await expectValid(clientBody);
    });

    it("declares the ApiKey (Authorization header) and bearer JWT schemes", () => {
      const schemes = Object.values(client.components?.securitySchemes ?? {});
      expect(schemes).toContainEqual(expect.objectContaining({ type: "apiKey", in: "header", name: "Authorization" }));
      expect(schemes).toContainEqual(expect.objectContaining({ type: "http", scheme: "bearer", bearerFormat: "JWT" }));
    });

    it("covers the client routes", () => {
      const paths = Object.keys(client.paths);
      for (const path of ["/api/v1/me", "/api/v1/auth", "/api/health", "/api/health/detailed"]) {
        expect(paths).toContain(path);
      }
      expect(client.paths["/api/v1/me"]?.get).toBeDefined();
      expect(client.paths["/api/v1/auth"]?.post).toBeDefined();
    });

    it("leaves out the build, metrics, admin and documentation routes", () => {
      const paths = Object.keys(client.paths);
      expect(paths).not.toContain("/active-version");
      expect(paths).not.toContain("/metrics");
      expect(paths.filter((p) => p.startsWith("/api/admin"))).toEqual([]);
      expect(paths.filter((p) => p.startsWith("/api/swagger") || p.startsWith("/api/docs"))).toEqual([]);
      // Everything in it is client surface: the API, health, the public tracking endpoints and MCP.
      const tracking = ["/go/", "/postback/", "/collect", "/mcp"];
      expect(
        paths.filter(
          (p) => !p.startsWith("/api/v1/") && !p.startsWith("/api/health") && !tracking.some((t) => p.startsWith(t)),
        ),
      ).toEqual([]);
      expect(paths).toEqual(
        expect.arrayContaining(["/go/{brandLinkId}/{trafficSourceId}", "/postback/{postbackKey}", "/collect"]),
      );
    });

    it("gives every operation at least one response with a schema", () => {
      const ops = operations(client);
      expect(ops.length).toBeGreaterThan(0);
      expect(ops.filter((op) => !hasResponseSchema(op.operation)).map((op) => op.id)).toEqual([]);
    });
  });

  describe("admin document", () => {
    let admin: OpenApiDoc;
    let adminBody: string;
    beforeAll(async () => {
      ({ doc: admin, body: adminBody } = await fetchDoc(t, ADMIN_DOC));
    });

    it("is a valid OpenAPI 3.1 document", async () => {
      expect(admin.openapi).toMatch(/^3\.1\./);
      await expectValid(adminBody);
    });

    it("covers the admin routes and nothing of the client surface", () => {
      const paths = Object.keys(admin.paths);
      expect(paths).toContain("/api/admin/tenants");
      expect(paths).not.toContain("/api/v1/me");
      expect(paths.filter((p) => !p.startsWith("/api/admin/"))).toEqual([]);
    });

    it("declares a bearer scheme for the admin key", () => {
      const schemes = Object.values(admin.components?.securitySchemes ?? {});
      expect(schemes).toContainEqual(expect.objectContaining({ type: "http", scheme: "bearer" }));
    });

    it("gives every operation at least one response with a schema", () => {
      const ops = operations(admin);
      expect(ops.length).toBeGreaterThan(0);
      expect(ops.filter((op) => !hasResponseSchema(op.operation)).map((op) => op.id)).toEqual([]);
    });

    it("still guards the admin routes themselves", async () => {
      const res = await t.call({ method: "POST", url: "/api/admin/tenants", payload: { name: "Nope" } });
      expect(res.statusCode).toBe(401);
      const authed = await t.call({
        method: "GET",
        url: "/api/admin/tenants",
        headers: { authorization: `Bearer ${ADMIN_KEY}` },
      });
      expect(authed.statusCode).toBe(200);
    });
  });

  describe("/active-version", () => {
    it("answers the build as plain strings", async () => {
      const res = await t.app.inject({ method: "GET", url: "/active-version" });
      expect(res.statusCode).toBe(200);
      const body = JSON.parse(res.body) as Record<string, unknown>;
      expect(Object.keys(body).sort()).toEqual(["buildNumber", "buildTime", "commitSha", "version"]);
      for (const key of ["version", "buildNumber", "buildTime", "commitSha"]) {
        expect(typeof body[key], key).toBe("string");
        expect(body[key], key).not.toBe("");
      }
    });
  });
});

describe("without ADMIN_API_KEY", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({ env: { ADMIN_API_KEY: "" } });
  });
  afterAll(() => t.close());

  it("has no admin document and no admin routes", async () => {
    expect(t.ctx.config.adminApiKey).toBeUndefined();
    const doc = await t.call({ method: "GET", url: ADMIN_DOC });
    expect(doc.statusCode).toBe(404);
    const create = await t.call({
      method: "POST",
      url: "/api/admin/tenants",
      headers: { authorization: `Bearer ${ADMIN_KEY}` },
      payload: { name: "Nope" },
    });
    expect(create.statusCode).toBe(404);
  });

  it("still publishes the client document", async () => {
    const res = await t.call({ method: "GET", url: CLIENT_DOC });
    expect(res.statusCode).toBe(200);
  });
});

describe("/active-version with build overrides", () => {
  const build = { version: "9.9.9", buildNumber: "42", commitSha: "abc123", buildTime: "2026-01-01T00:00:00Z" };
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp({
      env: {
        APP_VERSION: build.version,
        BUILD_NUMBER: build.buildNumber,
        COMMIT_SHA: build.commitSha,
        BUILD_TIME: build.buildTime,
      },
    });
  });
  afterAll(() => t.close());

  it("answers exactly the overridden values, without auth", async () => {
    const res = await t.app.inject({ method: "GET", url: "/active-version" });
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual(build);
  });
});
