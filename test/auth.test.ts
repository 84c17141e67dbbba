import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { createApiToken } from "../src/features/api-tokens/index.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

const auth = (value: string) => ({ authorization: value });

describe("authentication", () => {
  let t: TestApp;
  let a: Tenancy;
  let b: Tenancy;

  beforeAll(async () => {
    t = await startTestApp({ env: { API_KEY_CACHE_TTL_S: "30" } });
    a = await seedTenancy(t);
    b = await seedTenancy(t);
  });
  afterAll(() => t.close());

  describe("POST /api/v1/auth", () => {
    it("returns a bearer JWT with its expiry", async () => {
      const res = await t.call({
        method: "POST",
        url: "/api/v1/auth",
        payload: { email: a.email, password: a.password },
      });
      expect(res.statusCode).toBe(200);
      const { data } = res.json();
      expect(data.tokenType).toBe("Bearer");
      expect(data.token.split(".")).toHaveLength(3);
      expect(new Date(data.expiresAt).getTime()).toBeGreaterThan(t.clock.now().getTime());
    });

    it("refuses a wrong password and an unknown email alike", async () => {
      const wrong = await t.call({
        method: "POST",
        url: "/api/v1/auth",
        payload: { email: a.email, password: "nope" },
      });
      const unknown = await t.call({
        method: "POST",
        url: "/api/v1/auth",
        payload: { email: "nobody@example.com", password: "nope" },
      });
      expect(wrong.statusCode).toBe(401);
      expect(unknown.statusCode).toBe(401);
      expect(wrong.json()).toEqual(unknown.json());
    });

    it("stores passwords as scrypt hashes only", async () => {
      const rows = await t.ctx.db.query<{ password_hash: string }>("select password_hash from users where id = $1", [
        a.userId,
      ]);
      expect(rows[0]?.password_hash).toMatch(/^scrypt\$131072\$8\$1\$/);
      expect(rows[0]?.password_hash).not.toContain(a.password);
    });
  });

  describe("GET /api/v1/me", () => {
    it("returns the signed-in person with effective permissions", async () => {
      const res = await t.call({ method: "GET", url: "/api/v1/me", headers: auth(a.bearer) });
      expect(res.statusCode).toBe(200);
      const me = res.json().data;
      expect(me).toMatchObject({ id: a.userId, email: a.email, tenantId: a.tenantId });
      // account.admin implies everything but traffic-sources.delete and reports.update.
      expect(me.permissions).toContain("webhooks.update");
      expect(me.permissions).not.toContain("traffic-sources.delete");
      expect(me.permissions).not.toContain("reports.update");
    });

    it("is tied to a person: an API key gets 403", async () => {
      const res = await t.call({ method: "GET", url: "/api/v1/me", headers: auth(a.apiKey) });
      expect(res.statusCode).toBe(403);
      expect(res.json().code).toBe("forbidden");
      expect(res.json().message).toMatch(/tied to a person/);
    });
  });

  describe("credentials", () => {
    it.each([
      ["no header", undefined, "Missing Authorization header"],
      ["an unknown scheme", "Basic dXNlcjpwYXNz", "Unsupported Authorization scheme 'basic'"],
      ["an empty credential", "ApiKey ", "Authorization header has no credential"],
      ["an unknown key", "ApiKey bm90LWEta2V5", "API key is invalid, revoked or expired"],
      ["a garbage JWT", "Bearer abc.def.ghi", "Bearer token is invalid or expired"],
    ])("refuses %s with 401", async (_name, header, message) => {
      const res = await t.call({ method: "GET", url: "/api/v1/users", headers: header ? auth(header) : {} });
      expect(res.statusCode).toBe(401);
      expect(res.json().code).toBe("unauthorized");
      expect(res.json().message).toContain(message);
    });

    it("refuses a JWT whose signature was tampered with", async () => {
      const [head, payload, sig] = a.bearer.slice("Bearer ".length).split(".");
      const forged = JSON.parse(Buffer.from(payload ?? "", "base64url").toString());
      forged.tid = b.tenantId;
      const token = `${head}.${Buffer.from(JSON.stringify(forged)).toString("base64url")}.${sig}`;
      const res = await t.call({ method: "GET", url: "/api/v1/users", headers: auth(`Bearer ${token}`) });
      expect(res.statusCode).toBe(401);
    });

    it("refuses an expired JWT", async () => {
      const clock = t.clock.now();
      try {
        t.clock.advance(13 * 3600 * 1000);
        const res = await t.call({ method: "GET", url: "/api/v1/me", headers: auth(a.bearer) });
        expect(res.statusCode).toBe(401);
      } finally {
        t.clock.set(clock);
      }
    });

    it.each(["api_key", "apiKey", "access_token", "token"])(
      "never accepts a credential in the query string (%s), even beside a valid header",
      async (name) => {
        const raw = a.apiKey.slice("ApiKey ".length);
        const res = await t.call({
          method: "GET",
          url: `/api/v1/users?${name}=${encodeURIComponent(raw)}`,
          headers: auth(a.apiKey),
        });
        expect(res.statusCode).toBe(401);
        expect(res.json().message).toMatch(/never accepted in the query string/);
      },
    );

    it("accepts the ApiKey scheme case-insensitively and acts as account admin plus scopes", async () => {
      const res = await t.call({
        method: "GET",
        url: "/api/v1/api-tokens/scopes",
        headers: auth(`apikey ${a.apiKey.slice(7)}`),
      });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toContain("account.admin");
      expect(res.json().data).not.toContain("traffic-sources.delete");
    });
  });

  describe("tenant scoping", () => {
    it("answers another tenant's id with 404, never its data", async () => {
      const mine = await t.call({ method: "GET", url: `/api/v1/users/${a.userId}`, headers: auth(a.bearer) });
      expect(mine.statusCode).toBe(200);
      for (const credential of [b.bearer, b.apiKey]) {
        const theirs = await t.call({ method: "GET", url: `/api/v1/users/${a.userId}`, headers: auth(credential) });
        expect(theirs.statusCode).toBe(404);
        expect(theirs.json()).toEqual({ code: "not_found", message: `User '${a.userId}' was not found`, data: null });
      }
    });

    it("lists only the caller's tenant", async () => {
      const res = await t.call({ method: "GET", url: "/api/v1/users", headers: auth(b.apiKey) });
      expect(res.json().data.map((u: { id: string }) => u.id)).toEqual([b.userId]);
      const audit = await t.call({ method: "GET", url: "/api/v1/audit-log?limit=500", headers: auth(a.bearer) });
      const entries = audit.json().data as { id: string }[];
      expect(entries.length).toBeGreaterThan(0);
      const other = await t.call({
        method: "GET",
        url: `/api/v1/audit-log/${entries[0]?.id}`,
        headers: auth(b.bearer),
      });
      expect(other.statusCode).toBe(404);
    });
  });
});

describe("API key verification", () => {
  it("caches a validated key for API_KEY_CACHE_TTL_S, then sees its removal", async () => {
    const t = await startTestApp({ env: { API_KEY_CACHE_TTL_S: "30" } });
    try {
      const who = await seedTenancy(t);
      const call = () => t.call({ method: "GET", url: "/api/v1/users", headers: auth(who.apiKey) });
      expect((await call()).statusCode).toBe(200);
      await t.ctx.db.query("delete from api_tokens where id = $1", [who.apiKeyId]);
      t.clock.advance(29_000);
      expect((await call()).statusCode).toBe(200);
      t.clock.advance(2_000);
      expect((await call()).statusCode).toBe(401);
    } finally {
      await t.close();
    }
  });

  it("refuses an expired key at once, cached or not", async () => {
    const t = await startTestApp({ env: { API_KEY_CACHE_TTL_S: "3600" } });
    try {
      const who = await seedTenancy(t);
      const now = t.clock.now();
      const key = await createApiToken(
        t.ctx.db,
        who.tenantId,
        { name: "short lived", expirationDate: new Date(now.getTime() + 60_000) },
        { type: "system", name: "test" },
        now,
      );
      const call = () => t.call({ method: "GET", url: "/api/v1/users", headers: auth(`ApiKey ${key.token}`) });
      expect((await call()).statusCode).toBe(200);
      t.clock.advance(60_000);
      const res = await call();
      expect(res.statusCode).toBe(401);
      expect(res.json().message).toBe("API key is invalid, revoked or expired");
    } finally {
      await t.close();
    }
  });

  it("stores only the SHA-256 of a key", async () => {
    const t = await startTestApp();
    try {
      const who = await seedTenancy(t);
      const raw = who.apiKey.slice("ApiKey ".length);
      expect(Buffer.from(raw, "base64")).toHaveLength(32);
      const rows = await t.ctx.db.query<{ token_hash: string }>("select token_hash from api_tokens where id = $1", [
        who.apiKeyId,
      ]);
      expect(rows[0]?.token_hash).toMatch(/^[0-9a-f]{64}$/);
      expect(JSON.stringify(rows)).not.toContain(raw);
    } finally {
      await t.close();
    }
  });
});
