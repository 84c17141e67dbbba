import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { PERMISSIONS } from "../src/features/auth/index.js";
import { MAX_PARAM_LENGTH } from "../src/platform/http/conventions.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

// docs/api-conventions.md: the envelope on every /api answer, errors included; validation errors
// carry data.errors; an id that does not exist in the caller's tenant is a 404, after 401/403.
describe("the envelope on every /api error", () => {
  let t: TestApp;
  let admin: Tenancy;

  beforeAll(async () => {
    t = await startTestApp({ app: { rateLimit: { max: 1000, anonymousMax: 1000 } } });
    admin = await seedTenancy(t);
  });
  afterAll(() => t.close());

  describe("the router's own refusals", () => {
    it("answers a bad percent-encoding with a validation_error envelope naming the path, and the request id", async () => {
      const res = await t.call({
        method: "GET",
        url: "/api/v1/users/%E0%A4%A",
        headers: { authorization: admin.bearer, "x-request-id": "req-bad-url" },
      });
      expect(res.statusCode).toBe(400);
      expect(res.headers["x-request-id"]).toBe("req-bad-url");
      const message = "'/api/v1/users/%E0%A4%A' is not a valid url component";
      expect(res.json()).toEqual({ code: "validation_error", message, data: { errors: [{ path: "url", message }] } });
    });

    it("answers a bad percent-encoding outside /api in plain text, with the request id", async () => {
      const res = await t.call({ method: "GET", url: "/go/%E0%A4%A/1" });
      expect(res.statusCode).toBe(400);
      expect(res.headers["content-type"]).toMatch(/^text\/plain/);
      expect(res.headers["x-request-id"]).toMatch(/^req_/);
    });

    it("lets ids far over Fastify's default 100 characters reach their route: 401 without a credential, then 404", async () => {
      const id = `usr_${"a".repeat(300)}`;
      const anonymous = await t.call({ method: "GET", url: `/api/v1/users/${id}` });
      expect(anonymous.statusCode).toBe(401);
      expect(anonymous.json().code).toBe("unauthorized");

      const res = await t.call({ method: "GET", url: `/api/v1/users/${id}`, headers: { authorization: admin.bearer } });
      expect(res.statusCode).toBe(404);
      expect(res.headers["x-request-id"]).toMatch(/^req_/);
      // The message names the id without echoing all of it.
      expect(res.json()).toEqual({
        code: "not_found",
        message: `The id '${id.slice(0, 100)}...' was not found`,
        data: null,
      });
    });

    it("answers a path segment over the router's limit with a 404 envelope and the request id", async () => {
      const res = await t.call({
        method: "GET",
        url: `/api/v1/users/${"a".repeat(MAX_PARAM_LENGTH + 1)}`,
        headers: { authorization: admin.bearer },
      });
      expect(res.statusCode).toBe(404);
      expect(res.headers["x-request-id"]).toMatch(/^req_/);
      expect(res.json()).toMatchObject({ code: "not_found", data: null });
    });
  });

  describe("body errors carry data.errors", () => {
    it.each([
      ["malformed JSON", "application/json", '{"email": "a@b.c", ', 400, "body", "Request body is not valid JSON"],
      [
        "a body over 1 MiB",
        "application/json",
        JSON.stringify({ email: "a@b.c", password: "x".repeat(2 * 1024 * 1024) }),
        413,
        "body",
        "Request body is too large",
      ],
      [
        "an unsupported Content-Type",
        "application/xml",
        "<login/>",
        415,
        "content-type",
        "Content-Type is not supported; send application/json",
      ],
    ])("names the part at fault for %s", async (_case, contentType, payload, status, path, message) => {
      const res = await t.call({
        method: "POST",
        url: "/api/v1/auth",
        headers: { "content-type": contentType },
        payload,
      });
      expect(res.statusCode).toBe(status);
      expect(res.json()).toEqual({ code: "validation_error", message, data: { errors: [{ path, message }] } });
    });
  });

  describe("a malformed path id is an id that does not exist", () => {
    it.each([
      ["/api/v1/users/foo", "User 'foo' was not found"],
      ["/api/v1/users/usr_UPPER", "User 'usr_UPPER' was not found"],
      ["/api/v1/users/%00", "The id '\u0000' was not found"],
      [`/api/v1/issues/iss_${"a".repeat(70)}`, `Issue 'iss_${"a".repeat(70)}' was not found`],
      ["/api/v1/issues/not-an-issue", "Issue 'not-an-issue' was not found"],
      ["/api/v1/issues/%00", "The id '\u0000' was not found"],
      ["/api/v1/api-tokens/%00", "The id '\u0000' was not found"],
      [`/api/v1/api-tokens/tok_${"a".repeat(120)}`, `The id 'tok_${"a".repeat(96)}...' was not found`],
      ["/api/v1/audit-log/%00", "The id '\u0000' was not found"],
      ["/api/v1/audit-log/aud_NOPE", "Audit entry 'aud_NOPE' was not found"],
      ["/api/v1/conversions/%00", "The id '\u0000' was not found"],
      [`/api/v1/conversions/${"c".repeat(150)}`, `The id '${"c".repeat(100)}...' was not found`],
    ])("GET %s is a 404", async (url, message) => {
      const res = await t.call({ method: "GET", url, headers: { authorization: admin.bearer } });
      expect(res.statusCode).toBe(404);
      expect(res.json()).toEqual({ code: "not_found", message, data: null });
    });

    it.each(["%00", `tok_${"a".repeat(120)}`, "not-a-token"])(
      "DELETE /api/v1/api-tokens/%s answers 200, nothing deleted (it never errors on an unknown id)",
      async (id) => {
        const res = await t.call({
          method: "DELETE",
          url: `/api/v1/api-tokens/${id}`,
          headers: { authorization: admin.bearer },
        });
        expect(res.statusCode).toBe(200);
        expect(res.json().data).toEqual({ id: decodeURIComponent(id), deleted: false });
      },
    );

    it.each(["/api/v1/users/foo", `/api/v1/issues/iss_${"a".repeat(70)}`])(
      "still checks the credential (401) and the permission (403) first: %s",
      async (url) => {
        expect((await t.call({ method: "GET", url })).statusCode).toBe(401);
        const reader = await seedTenancy(t, { permissions: ["reports.read"] });
        const res = await t.call({ method: "GET", url, headers: { authorization: reader.bearer } });
        expect(res.statusCode).toBe(403);
        expect(res.json().code).toBe("forbidden");
      },
    );

    it("answers a NUL or over-long id on every route with an id in its path with 404 (DELETE of a key: 200)", async () => {
      const everything = await seedTenancy(t, { permissions: [...PERMISSIONS] });
      const doc = JSON.parse((await t.call({ method: "GET", url: "/api/swagger/v1/swagger.json" })).body) as {
        paths: Record<string, Record<string, unknown>>;
      };
      const wrong: string[] = [];
      let checked = 0;
      for (const [path, operations] of Object.entries(doc.paths)) {
        if (!path.includes("{")) continue;
        for (const method of Object.keys(operations)) {
          for (const id of ["%00", "x".repeat(150)]) {
            const res = await t.call({
              method: method.toUpperCase() as "GET",
              url: path.replace(/\{[^}]+\}/g, id),
              headers: { authorization: everything.bearer },
              ...(method === "get" || method === "delete" ? {} : { payload: {} }),
            });
            const expected = method === "delete" && path === "/api/v1/api-tokens/{id}" ? 200 : 404;
            checked += 1;
            if (res.statusCode !== expected) wrong.push(`${method} ${path} ${id.slice(0, 3)}: ${res.statusCode}`);
          }
        }
      }
      expect(checked).toBeGreaterThan(50);
      expect(wrong).toEqual([]);
    });
  });
});
