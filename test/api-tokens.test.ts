import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { ADMIN_KEY, seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

const auth = (value: string) => ({ authorization: value });

/** The same instant one calendar year later (UTC); 29 February gives 28 February. */
function oneYearAfter(at: Date): Date {
  const next = new Date(at);
  next.setUTCFullYear(at.getUTCFullYear() + 1);
  if (next.getUTCMonth() !== at.getUTCMonth()) next.setUTCDate(0);
  return next;
}

describe("API tokens", () => {
  let t: TestApp;
  let admin: Tenancy;
  let logs: string;

  beforeAll(async () => {
    logs = "";
    const stream = new Writable({
      write(chunk, _encoding, done) {
        logs += chunk.toString();
        done();
      },
    });
    t = await startTestApp({ env: { API_KEY_CACHE_TTL_S: "3600" }, app: { logger: { level: "trace", stream } } });
    admin = await seedTenancy(t);
  });
  afterAll(() => t.close());

  const create = (body: object, who: string = admin.bearer) =>
    t.call({ method: "POST", url: "/api/v1/api-tokens", headers: auth(who), payload: body });

  describe("create", () => {
    it("returns the raw key once, base64 of 32 bytes, with the record", async () => {
      const res = await create({ name: "Reporting robot", scopes: ["reports.read"] });
      expect(res.statusCode).toBe(201);
      const data = res.json().data;
      expect(data).toMatchObject({
        name: "Reporting robot",
        scopes: ["reports.read"],
        legacy: false,
        lastUsedAt: null,
        createdBy: { id: admin.userId },
      });
      expect(data.id).toMatch(/^tok_/);
      expect(Buffer.from(data.token, "base64")).toHaveLength(32);
      expect(data.expirationDate).toBe(oneYearAfter(t.clock.now()).toISOString());
      const one = await t.call({ method: "GET", url: `/api/v1/api-tokens/${data.id}`, headers: auth(admin.bearer) });
      expect(one.statusCode).toBe(200);
      expect(one.json().data).not.toHaveProperty("token");
      expect(one.body).not.toContain(data.token);
      const list = await t.call({ method: "GET", url: "/api/v1/api-tokens?limit=500", headers: auth(admin.bearer) });
      expect(list.body).not.toContain(data.token);
      const audit = await t.call({ method: "GET", url: "/api/v1/audit-log?limit=500", headers: auth(admin.bearer) });
      expect(audit.body).toContain("api_token.created");
      expect(audit.body).not.toContain(data.token);
      // The key works, and neither its use nor its creation wrote it into a log line.
      const used = await t.call({ method: "GET", url: "/api/v1/users", headers: auth(`ApiKey ${data.token}`) });
      expect(used.statusCode).toBe(200);
      expect(logs.length).toBeGreaterThan(0);
      expect(logs).not.toContain(data.token);
    });

    it("marks a key without scopes as legacy", async () => {
      for (const body of [{ name: "No scopes at all" }, { name: "Empty scopes", scopes: [] }]) {
        const res = await create(body);
        expect(res.statusCode).toBe(201);
        expect(res.json().data).toMatchObject({ scopes: [], legacy: true });
      }
    });

    it.each([
      [{ name: "abc" }, "name", 400],
      [{ name: "    abc   " }, "name", 400],
      [{}, "name", 400],
      [{ name: "Past expiry", expirationDate: "2000-01-01T00:00:00Z" }, "expirationDate", 400],
      [{ name: "Bad date", expirationDate: "tomorrow" }, "expirationDate", 400],
      [{ name: "Unknown scope", scopes: ["reports.read", "reports.delete"] }, "scopes[1]", 400],
    ])("refuses %j naming %s, storing nothing", async (body, field, status) => {
      const before = await t.ctx.db.query<{ n: number }>("select count(*)::int as n from api_tokens");
      const res = await create(body);
      expect(res.statusCode).toBe(status);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message.startsWith(field)).toBe(true);
      const after = await t.ctx.db.query<{ n: number }>("select count(*)::int as n from api_tokens");
      expect(after[0]?.n).toBe(before[0]?.n);
    });

    it("names the unknown scope string", async () => {
      const res = await create({ name: "Unknown scope two", scopes: ["reports.delete"] });
      expect(res.json().message).toContain("'reports.delete'");
    });

    it("refuses an expiry more than one year ahead, accepts exactly one year", async () => {
      const limit = oneYearAfter(t.clock.now()).getTime();
      const late = await create({ name: "Too late", expirationDate: new Date(limit + 1000).toISOString() });
      expect(late.statusCode).toBe(400);
      expect(late.json().message).toBe("expirationDate must be at most one year after creation");
      const edge = await create({ name: "Just in time", expirationDate: new Date(limit).toISOString() });
      expect(edge.statusCode).toBe(201);
    });

    it("refuses a duplicate name regardless of case with 409", async () => {
      expect((await create({ name: "Nightly Export" })).statusCode).toBe(201);
      const dup = await create({ name: "NIGHTLY export" });
      expect(dup.statusCode).toBe(409);
      expect(dup.json()).toMatchObject({
        code: "conflict",
        message: "An API token named 'NIGHTLY export' already exists",
      });
    });

    it("answers two concurrent creates of one name with one 201 and one 409", async () => {
      // On PostgreSQL both transactions can pass the name check before either inserts; the
      // unique index then refuses the second insert. (PGlite runs transactions one at a time.)
      const answers = await Promise.all([create({ name: "Twin export" }), create({ name: "TWIN export" })]);
      expect(answers.map((res) => res.statusCode).sort()).toEqual([201, 409]);
      const refused = answers.find((res) => res.statusCode === 409);
      expect(refused?.json()).toMatchObject({ code: "conflict", message: expect.stringContaining("already exists") });
      const rows = await t.ctx.db.query(
        "select 1 from api_tokens where tenant_id = $1 and lower(name) = 'twin export'",
        [admin.tenantId],
      );
      expect(rows).toHaveLength(1);
    });

    it("answers 409, not 500, when a twin is inserted between the name check and the insert", async () => {
      // Stands in for another node committing the same name after this one checked it: a trigger
      // inserts the twin just before our row, so our insert hits the unique index on the name.
      await t.ctx.db.exec(`
        create function test_insert_twin() returns trigger language plpgsql as $$
        begin
          if pg_trigger_depth() = 1 then
            insert into api_tokens (id, tenant_id, name, token_hash, legacy, expiration_date)
            values (new.id || '_twin', new.tenant_id, upper(new.name), 'twin' || new.token_hash, true, new.expiration_date);
          end if;
          return new;
        end $$;
        create trigger test_insert_twin before insert on api_tokens
          for each row when (new.name = 'Raced export') execute function test_insert_twin();`);
      try {
        const res = await create({ name: "Raced export" });
        expect(res.statusCode, res.body).toBe(409);
        expect(res.json()).toMatchObject({
          code: "conflict",
          message: "An API token named 'Raced export' already exists",
        });
      } finally {
        await t.ctx.db.exec("drop trigger test_insert_twin on api_tokens; drop function test_insert_twin();");
      }
      const rows = await t.ctx.db.query("select 1 from api_tokens where lower(name) = 'raced export'");
      expect(rows).toHaveLength(0);
    });

    it("refuses to grant a scope the caller does not hold with 403, storing nothing", async () => {
      const res = await create({ name: "Delete sources", scopes: ["traffic-sources.delete"] });
      expect(res.statusCode).toBe(403);
      expect(res.json().message).toContain("traffic-sources.delete");
      const rows = await t.ctx.db.query("select 1 from api_tokens where name = 'Delete sources'");
      expect(rows).toHaveLength(0);
    });

    it("lets a caller holding the permission grant it", async () => {
      const full = await seedTenancy(t, { permissions: ["account.admin", "traffic-sources.delete", "reports.update"] });
      const res = await create(
        { name: "Full power", scopes: ["traffic-sources.delete", "reports.update"] },
        full.bearer,
      );
      expect(res.statusCode).toBe(201);
      // The key holds exactly the scopes granted, as stored and as the API reads them back.
      const id = res.json().data.id as string;
      const read = await t.call({ method: "GET", url: `/api/v1/api-tokens/${id}`, headers: auth(full.bearer) });
      expect([...read.json().data.scopes].sort()).toEqual(["reports.update", "traffic-sources.delete"]);
      const [row] = await t.ctx.db.query<{ scopes: string[] }>("select scopes from api_tokens where id = $1", [id]);
      expect([...(row?.scopes ?? [])].sort()).toEqual(["reports.update", "traffic-sources.delete"]);
    });
  });

  describe("list, get, scopes", () => {
    it("pages the tenant's keys with a total and searches names", async () => {
      const who = await seedTenancy(t);
      for (const name of ["Alpha key", "Beta key", "Gamma key"])
        expect((await create({ name }, who.bearer)).statusCode).toBe(201);
      const page = await t.call({ method: "GET", url: "/api/v1/api-tokens?limit=2", headers: auth(who.bearer) });
      // seedTenancy made one key too.
      expect(page.json().pagination).toEqual({ offset: 0, limit: 2, total: 4 });
      const found = await t.call({ method: "GET", url: "/api/v1/api-tokens?search=BETA", headers: auth(who.bearer) });
      expect(found.json().data.map((k: { name: string }) => k.name)).toEqual(["Beta key"]);
    });

    it("answers another tenant's key id with 404", async () => {
      const other = await seedTenancy(t);
      const res = await t.call({
        method: "GET",
        url: `/api/v1/api-tokens/${other.apiKeyId}`,
        headers: auth(admin.bearer),
      });
      expect(res.statusCode).toBe(404);
    });

    it("lists as grantable scopes the permissions the caller holds", async () => {
      const plain = await t.call({ method: "GET", url: "/api/v1/api-tokens/scopes", headers: auth(admin.bearer) });
      expect(plain.json().data).toEqual([
        "account.admin",
        "reports.read",
        "catalog.read",
        "catalog.update",
        "conversions.read",
        "conversions.update",
        "webhooks.read",
        "webhooks.update",
        "usage.read",
      ]);
      const full = await seedTenancy(t, { permissions: ["account.admin", "traffic-sources.delete"] });
      const more = await t.call({ method: "GET", url: "/api/v1/api-tokens/scopes", headers: auth(full.bearer) });
      expect(more.json().data).toContain("traffic-sources.delete");
      expect(more.json().data).not.toContain("reports.update");
    });
  });

  describe("permissions and entitlement", () => {
    it("needs account.admin on every token endpoint", async () => {
      const reader = await seedTenancy(t, { permissions: ["reports.read", "usage.read"] });
      for (const [method, url] of [
        ["GET", "/api/v1/api-tokens"],
        ["GET", "/api/v1/api-tokens/scopes"],
        ["GET", `/api/v1/api-tokens/${reader.apiKeyId}`],
        ["DELETE", `/api/v1/api-tokens/${reader.apiKeyId}`],
        ["POST", "/api/v1/api-tokens"],
      ] as const) {
        const res = await t.call({
          method,
          url,
          headers: auth(reader.bearer),
          ...(method === "POST" ? { payload: { name: "x" } } : {}),
        });
        expect(res.statusCode, `${method} ${url}`).toBe(403);
      }
    });

    it("needs the tenant's api_tokens entitlement, checked before the body", async () => {
      const who = await seedTenancy(t);
      const patch = (apiTokens: boolean) =>
        t.call({
          method: "PATCH",
          url: `/api/admin/tenants/${who.tenantId}`,
          headers: auth(`Bearer ${ADMIN_KEY}`),
          payload: { entitlements: { apiTokens } },
        });
      expect((await patch(false)).statusCode).toBe(200);
      for (const [method, url] of [
        ["GET", "/api/v1/api-tokens"],
        ["GET", "/api/v1/api-tokens/scopes"],
        ["GET", `/api/v1/api-tokens/${who.apiKeyId}`],
        ["DELETE", `/api/v1/api-tokens/${who.apiKeyId}`],
        ["POST", "/api/v1/api-tokens"],
      ] as const) {
        for (const credential of [who.bearer, who.apiKey]) {
          const res = await t.call({
            method,
            url,
            headers: auth(credential),
            ...(method === "POST" ? { payload: { name: "x" } } : {}),
          });
          expect(res.statusCode, `${method} ${url}`).toBe(403);
          expect(res.json().message).toContain("api_tokens entitlement");
        }
      }
      // Other endpoints still take the key: the entitlement gates token management only.
      expect((await t.call({ method: "GET", url: "/api/v1/users", headers: auth(who.apiKey) })).statusCode).toBe(200);
      expect((await patch(true)).statusCode).toBe(200);
      expect((await t.call({ method: "GET", url: "/api/v1/api-tokens", headers: auth(who.bearer) })).statusCode).toBe(
        200,
      );
    });
  });

  describe("delete", () => {
    it("answers 200 whether or not the id existed, and leaves other tenants' keys alone", async () => {
      const other = await seedTenancy(t);
      for (const id of ["tok_doesnotexist", other.apiKeyId, "not even an id"]) {
        const res = await t.call({
          method: "DELETE",
          url: `/api/v1/api-tokens/${encodeURIComponent(id)}`,
          headers: auth(admin.bearer),
        });
        expect(res.statusCode).toBe(200);
        expect(res.json()).toMatchObject({ code: "ok", data: { id, deleted: false } });
      }
      expect((await t.call({ method: "GET", url: "/api/v1/users", headers: auth(other.apiKey) })).statusCode).toBe(200);
    });

    it("stops the key at once on this node, even with a long cache", async () => {
      const who = await seedTenancy(t);
      expect((await t.call({ method: "GET", url: "/api/v1/users", headers: auth(who.apiKey) })).statusCode).toBe(200);
      const res = await t.call({
        method: "DELETE",
        url: `/api/v1/api-tokens/${who.apiKeyId}`,
        headers: auth(who.bearer),
      });
      expect(res.json().data).toEqual({ id: who.apiKeyId, deleted: true });
      expect((await t.call({ method: "GET", url: "/api/v1/users", headers: auth(who.apiKey) })).statusCode).toBe(401);
    });
  });

  describe("a key belongs to the tenant", () => {
    it("keeps working when its creator is disabled, and the audit log names the key", async () => {
      const who = await seedTenancy(t);
      const disable = await t.call({
        method: "PATCH",
        url: `/api/admin/users/${who.userId}`,
        headers: auth(`Bearer ${ADMIN_KEY}`),
        payload: { disabled: true },
      });
      expect(disable.statusCode).toBe(200);
      const made = await create({ name: "Made by a key" }, who.apiKey);
      expect(made.statusCode).toBe(201);
      expect(made.json().data.createdBy).toBeNull();
      const entries = await t.ctx.db.query<{ actor_type: string; actor_id: string; actor_name: string }>(
        "select actor_type, actor_id, actor_name from audit_log where tenant_id = $1 and action = 'api_token.created' and subject_id = $2",
        [who.tenantId, made.json().data.id],
      );
      expect(entries).toEqual([
        { actor_type: "api_key", actor_id: who.apiKeyId, actor_name: expect.stringMatching(/^Key \d+$/) },
      ]);
    });
  });

  describe("last use", () => {
    it("is recorded with the client IP without a write per request, one write per key per flush", async () => {
      const who = await seedTenancy(t);
      t.clock.advance(1000);
      const at = t.clock.now().toISOString();
      for (let i = 0; i < 5; i++) {
        const res = await t.call({
          method: "GET",
          url: "/api/v1/users",
          headers: auth(who.apiKey),
          remoteAddress: "203.0.113.9",
        });
        expect(res.statusCode).toBe(200);
      }
      const before = await t.ctx.db.query<{ last_used_at: Date | null }>(
        "select last_used_at from api_tokens where id = $1",
        [who.apiKeyId],
      );
      expect(before[0]?.last_used_at).toBeNull();
      const written = await t.ctx.lastUsed.flush();
      expect(written).toBeGreaterThanOrEqual(1);
      const after = await t.ctx.db.query<{ last_used_at: Date; last_used_ip: string }>(
        "select last_used_at, last_used_ip from api_tokens where id = $1",
        [who.apiKeyId],
      );
      expect(new Date(after[0]?.last_used_at ?? 0).toISOString()).toBe(at);
      expect(after[0]?.last_used_ip).toBe("203.0.113.9");
      const shown = await t.call({
        method: "GET",
        url: `/api/v1/api-tokens/${who.apiKeyId}`,
        headers: auth(who.bearer),
      });
      expect(shown.json().data.lastUsedAt).toBe(at);
      expect(await t.ctx.lastUsed.flush()).toBe(0);
    });
  });
});

describe("one year of validity is a calendar year (UTC)", () => {
  let t: TestApp;
  let who: Tenancy;

  beforeAll(async () => {
    t = await startTestApp();
    // A year that runs across 29 February 2028.
    t.clock.set("2027-06-01T10:30:00Z");
    who = await seedTenancy(t);
  });
  afterAll(() => t.close());

  const create = (body: object) =>
    t.call({ method: "POST", url: "/api/v1/api-tokens", headers: auth(who.apiKey), payload: body });

  it("defaults to the same date and time next year across a leap day", async () => {
    const res = await create({ name: "Across the leap day" });
    expect(res.statusCode).toBe(201);
    expect(res.json().data.expirationDate).toBe("2028-06-01T10:30:00.000Z");
  });

  it("accepts the same date and time next year across a leap day, refuses a moment later", async () => {
    const edge = await create({ name: "Leap edge", expirationDate: "2028-06-01T10:30:00Z" });
    expect(edge.statusCode, edge.body).toBe(201);
    const late = await create({ name: "Leap late", expirationDate: "2028-06-01T10:30:00.001Z" });
    expect(late.statusCode).toBe(400);
    expect(late.json().message).toBe("expirationDate must be at most one year after creation");
  });

  it("gives a key created on 29 February until 28 February of the next year", async () => {
    t.clock.set("2028-02-29T12:00:00Z");
    const made = await create({ name: "Leap day key" });
    expect(made.statusCode).toBe(201);
    expect(made.json().data.expirationDate).toBe("2029-02-28T12:00:00.000Z");
    expect((await create({ name: "Leap day edge", expirationDate: "2029-02-28T12:00:00Z" })).statusCode).toBe(201);
    const late = await create({ name: "Leap day late", expirationDate: "2029-03-01T12:00:00Z" });
    expect(late.statusCode).toBe(400);
  });
});
