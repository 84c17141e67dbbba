import type { InjectOptions } from "fastify";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { DAY_MS } from "../src/platform/durations.js";
import { ADMIN_KEY, seedTenancy, startTestApp, type TestApp } from "./helpers/app.js";

const ADMIN = { authorization: `Bearer ${ADMIN_KEY}` };

interface AuditItem {
  action: string;
  actor: { type: string; id: string | null; name: string };
  subject: { type: string; id: string } | null;
}

// Every operation of the admin surface, with a body it would accept.
const ADMIN_REQUESTS: InjectOptions[] = [
  { method: "POST", url: "/api/admin/tenants", payload: { name: "Nobody" } },
  { method: "GET", url: "/api/admin/tenants" },
  { method: "GET", url: "/api/admin/tenants/ten_0000" },
  { method: "GET", url: "/api/admin/tenants/ten_0000/webhook-usage" },
  { method: "PATCH", url: "/api/admin/tenants/ten_0000", payload: { name: "Renamed" } },
  {
    method: "POST",
    url: "/api/admin/tenants/ten_0000/users",
    payload: { email: "x@example.com", password: "long enough password", name: "X", permissions: [] },
  },
  { method: "PATCH", url: "/api/admin/users/usr_0000", payload: { disabled: true } },
  { method: "GET", url: "/api/admin/jobs" },
  { method: "POST", url: "/api/admin/jobs/retention/run", payload: {} },
];

describe("admin surface", () => {
  let t: TestApp;
  beforeAll(async () => {
    t = await startTestApp();
  });
  afterAll(() => t.close());

  async function admin(options: InjectOptions) {
    return t.call({ ...options, headers: { ...ADMIN, ...options.headers } });
  }

  async function createTenant(payload: Record<string, unknown>) {
    const res = await admin({ method: "POST", url: "/api/admin/tenants", payload });
    expect(res.statusCode, res.body).toBe(201);
    return res.json().data as { id: string; name: string };
  }

  async function createUser(tenantId: string, payload: Record<string, unknown>) {
    return admin({ method: "POST", url: `/api/admin/tenants/${tenantId}/users`, payload });
  }

  async function login(email: string, password: string) {
    return t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });
  }

  async function scopes(authorization: string) {
    return t.call({ method: "GET", url: "/api/v1/api-tokens/scopes", headers: { authorization } });
  }

  describe("credentials", () => {
    it.each([
      ["no Authorization header", undefined],
      ["a wrong key", "Bearer not-the-admin-key-at-all"],
      ["the right key under another scheme", `ApiKey ${ADMIN_KEY}`],
      ["an empty bearer", "Bearer "],
    ])("refuses %s with 401 in the envelope, on every operation", async (_label, authorization) => {
      for (const request of ADMIN_REQUESTS) {
        const res = await t.call({ ...request, headers: authorization === undefined ? {} : { authorization } });
        expect(res.statusCode, `${request.method} ${request.url}`).toBe(401);
        expect(res.json()).toMatchObject({ code: "unauthorized", data: null });
        expect(res.json().message).toContain("ADMIN_API_KEY");
      }
    });

    it("checks the credential before the body is validated", async () => {
      const res = await t.call({ method: "POST", url: "/api/admin/tenants", payload: { bogus: true } });
      expect(res.statusCode).toBe(401);
    });

    it("a tenant user's bearer token is not an admin credential", async () => {
      const who = await seedTenancy(t);
      const res = await t.call({ method: "GET", url: "/api/admin/tenants", headers: { authorization: who.bearer } });
      expect(res.statusCode).toBe(401);
    });

    it("without ADMIN_API_KEY every admin path is a 404, even with the old key", async () => {
      const off = await startTestApp({ env: { ADMIN_API_KEY: "" } });
      try {
        expect(off.ctx.config.adminApiKey).toBeUndefined();
        const requests: InjectOptions[] = [
          ...ADMIN_REQUESTS,
          { method: "GET", url: "/api/swagger/admin/swagger.json" },
          { method: "GET", url: "/api/admin" },
        ];
        for (const request of requests) {
          for (const headers of [{}, ADMIN]) {
            const res = await off.call({ ...request, headers });
            expect(res.statusCode, `${request.method} ${request.url}`).toBe(404);
            expect(res.json()).toMatchObject({ code: "not_found", data: null });
          }
        }
        // The client surface is unaffected.
        expect((await off.call({ method: "GET", url: "/api/health" })).statusCode).toBe(200);
      } finally {
        await off.close();
      }
    });
  });

  describe("tenants", () => {
    it("creates a tenant with the default entitlements and allowance, and a postback key shown once", async () => {
      const res = await admin({ method: "POST", url: "/api/admin/tenants", payload: { name: "  Default Plan Co " } });
      expect(res.statusCode).toBe(201);
      const body = res.json();
      expect(body.code).toBe("ok");
      expect(body.data).toMatchObject({
        name: "Default Plan Co",
        entitlements: { apiTokens: true, clickWebhooks: false },
        webhookAllowance: 100000,
      });
      expect(body.data.id).toMatch(/^ten_[0-9a-z]+$/);
      expect(body.data.postbackKey).toEqual(expect.any(String));
      expect(body.data.postbackKey.length).toBeGreaterThanOrEqual(16);

      const fetched = await admin({ method: "GET", url: `/api/admin/tenants/${body.data.id}` });
      expect(fetched.statusCode).toBe(200);
      expect(fetched.json().data).toMatchObject({
        id: body.data.id,
        name: "Default Plan Co",
        entitlements: { apiTokens: true, clickWebhooks: false },
        webhookAllowance: 100000,
      });
      expect(fetched.json().data).not.toHaveProperty("postbackKey");
    });

    it("takes entitlements and an allowance; a null allowance is unlimited", async () => {
      const res = await admin({
        method: "POST",
        url: "/api/admin/tenants",
        payload: { name: "Unlimited Co", entitlements: { clickWebhooks: true }, webhookAllowance: null },
      });
      expect(res.statusCode, res.body).toBe(201);
      expect(res.json().data).toMatchObject({
        entitlements: { apiTokens: true, clickWebhooks: true },
        webhookAllowance: null,
      });
      const fetched = await admin({ method: "GET", url: `/api/admin/tenants/${res.json().data.id}` });
      expect(fetched.json().data.webhookAllowance).toBeNull();

      const zero = await admin({
        method: "POST",
        url: "/api/admin/tenants",
        payload: { name: "Nothing Allowed Co", entitlements: { apiTokens: false }, webhookAllowance: 0 },
      });
      expect(zero.statusCode, zero.body).toBe(201);
      expect(zero.json().data).toMatchObject({
        entitlements: { apiTokens: false, clickWebhooks: false },
        webhookAllowance: 0,
      });
    });

    it.each([
      ["a missing name", {}, "name"],
      ["a blank name", { name: "   " }, "name"],
      ["an unknown property", { name: "Extra Co", plan: "gold" }, "plan"],
      ["an unknown entitlement", { name: "Extra Co", entitlements: { sso: true } }, "entitlements.sso"],
      ["a negative allowance", { name: "Neg Co", webhookAllowance: -1 }, "webhookAllowance"],
      ["a fractional allowance", { name: "Frac Co", webhookAllowance: 1.5 }, "webhookAllowance"],
      ["a text allowance", { name: "Text Co", webhookAllowance: "lots" }, "webhookAllowance"],
    ])("refuses %s with 400 naming the field", async (_label, payload, field) => {
      const res = await admin({ method: "POST", url: "/api/admin/tenants", payload });
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json();
      expect(body.code).toBe("validation_error");
      expect(body.message).toContain(field);
      expect(body.data.errors[0].path).toBe(field);
    });

    it("lists tenants in pages and searches names case-insensitively", async () => {
      const names = ["Zephyr Alpha", "zephyr beta", "ZEPHYR Gamma", "Unrelated Omega"];
      for (const name of names) await createTenant({ name });

      const all = await admin({ method: "GET", url: "/api/admin/tenants?search=zEpHyR" });
      expect(all.statusCode).toBe(200);
      expect(all.json().pagination).toEqual({ offset: 0, limit: 50, total: 3 });
      expect(all.json().data.map((x: { name: string }) => x.name)).toEqual(names.slice(0, 3));

      const page = await admin({ method: "GET", url: "/api/admin/tenants?search=zephyr&offset=1&limit=1" });
      expect(page.json().pagination).toEqual({ offset: 1, limit: 1, total: 3 });
      expect(page.json().data.map((x: { name: string }) => x.name)).toEqual(["zephyr beta"]);

      const beyond = await admin({ method: "GET", url: "/api/admin/tenants?search=zephyr&offset=10" });
      expect(beyond.json().data).toEqual([]);
      expect(beyond.json().pagination.total).toBe(3);

      // LIKE wildcards in the search are taken literally.
      const wildcard = await admin({ method: "GET", url: "/api/admin/tenants?search=%25" });
      expect(wildcard.json().pagination.total).toBe(0);

      const unfiltered = await admin({ method: "GET", url: "/api/admin/tenants?limit=2" });
      expect(unfiltered.json().data).toHaveLength(2);
      expect(unfiltered.json().pagination.total).toBeGreaterThanOrEqual(4);
      expect(unfiltered.json().data[0]).not.toHaveProperty("postbackKey");

      for (const query of ["limit=0", "limit=501", "offset=-1"]) {
        const bad = await admin({ method: "GET", url: `/api/admin/tenants?${query}` });
        expect(bad.statusCode, query).toBe(400);
        expect(bad.json().code).toBe("validation_error");
      }
    });

    it("answers 404 for an unknown tenant and 400 for a malformed id", async () => {
      const missing = await admin({ method: "GET", url: "/api/admin/tenants/ten_doesnotexist0" });
      expect(missing.statusCode).toBe(404);
      expect(missing.json()).toMatchObject({ code: "not_found", data: null });
      expect(missing.json().message).toContain("ten_doesnotexist0");

      const patch = await admin({
        method: "PATCH",
        url: "/api/admin/tenants/ten_doesnotexist0",
        payload: { name: "X" },
      });
      expect(patch.statusCode).toBe(404);

      const users = await createUser("ten_doesnotexist0", {
        email: "ghost@example.com",
        password: "long enough password",
        name: "Ghost",
        permissions: [],
      });
      expect(users.statusCode).toBe(404);

      const malformed = await admin({ method: "GET", url: "/api/admin/tenants/not-a-tenant-id" });
      expect(malformed.statusCode).toBe(400);
      expect(malformed.json().code).toBe("validation_error");
    });

    it("changes a tenant's name and allowance and refuses an empty change", async () => {
      const tenant = await createTenant({ name: "Before Rename" });
      const res = await admin({
        method: "PATCH",
        url: `/api/admin/tenants/${tenant.id}`,
        payload: { name: "After Rename", webhookAllowance: 5 },
      });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toMatchObject({
        id: tenant.id,
        name: "After Rename",
        webhookAllowance: 5,
        entitlements: { apiTokens: true, clickWebhooks: false },
      });

      const unlimited = await admin({
        method: "PATCH",
        url: `/api/admin/tenants/${tenant.id}`,
        payload: { webhookAllowance: null },
      });
      expect(unlimited.statusCode, unlimited.body).toBe(200);
      expect(unlimited.json().data).toMatchObject({ name: "After Rename", webhookAllowance: null });

      const empty = await admin({ method: "PATCH", url: `/api/admin/tenants/${tenant.id}`, payload: {} });
      expect(empty.statusCode).toBe(400);
      expect(empty.json().code).toBe("validation_error");
    });

    it("switching apiTokens off refuses the tenant's cached key at once; switching it on restores it", async () => {
      const who = await seedTenancy(t);
      // The key is now validated and cached.
      expect((await scopes(who.apiKey)).statusCode).toBe(200);

      const off = await admin({
        method: "PATCH",
        url: `/api/admin/tenants/${who.tenantId}`,
        payload: { entitlements: { apiTokens: false } },
      });
      expect(off.statusCode, off.body).toBe(200);
      expect(off.json().data.entitlements).toEqual({ apiTokens: false, clickWebhooks: false });

      const refused = await scopes(who.apiKey);
      expect(refused.statusCode).toBe(403);
      expect(refused.json().code).toBe("forbidden");
      expect(refused.json().message).toContain("api_tokens");
      expect((await scopes(who.bearer)).statusCode).toBe(403);

      const on = await admin({
        method: "PATCH",
        url: `/api/admin/tenants/${who.tenantId}`,
        payload: { entitlements: { apiTokens: true } },
      });
      expect(on.json().data.entitlements).toEqual({ apiTokens: true, clickWebhooks: false });
      const restored = await scopes(who.apiKey);
      expect(restored.statusCode).toBe(200);
      expect(restored.json().data).toContain("account.admin");
      expect((await scopes(who.bearer)).statusCode).toBe(200);

      // Changing one entitlement keeps the other.
      const click = await admin({
        method: "PATCH",
        url: `/api/admin/tenants/${who.tenantId}`,
        payload: { entitlements: { clickWebhooks: true } },
      });
      expect(click.json().data.entitlements).toEqual({ apiTokens: true, clickWebhooks: true });
    });
  });

  describe("users", () => {
    it("creates a person who can sign in; the password is never echoed", async () => {
      const tenant = await createTenant({ name: "People Co" });
      const password = "a long secret password";
      const res = await createUser(tenant.id, {
        email: "Ada@Example.com",
        password,
        name: "Ada",
        permissions: ["reports.read", "usage.read"],
      });
      expect(res.statusCode, res.body).toBe(201);
      const user = res.json().data;
      expect(user).toMatchObject({
        tenantId: tenant.id,
        email: "ada@example.com",
        name: "Ada",
        permissions: ["reports.read", "usage.read"],
        disabled: false,
      });
      expect(user.id).toMatch(/^usr_[0-9a-z]+$/);
      expect(res.body).not.toContain(password);
      expect(res.body.toLowerCase()).not.toContain("password");

      const signedIn = await login("ada@example.com", password);
      expect(signedIn.statusCode).toBe(200);
      const me = await t.call({
        method: "GET",
        url: "/api/v1/me",
        headers: { authorization: `Bearer ${signedIn.json().data.token}` },
      });
      expect(me.statusCode).toBe(200);
      expect(me.json().data).toMatchObject({
        id: user.id,
        tenantId: tenant.id,
        permissions: ["reports.read", "usage.read"],
      });
    });

    it("refuses a duplicate email (any case) with 409", async () => {
      const tenant = await createTenant({ name: "Duplicate Co" });
      const other = await createTenant({ name: "Other Duplicate Co" });
      const body = { email: "dup@example.com", password: "long enough password", name: "Dup", permissions: [] };
      expect((await createUser(tenant.id, body)).statusCode).toBe(201);
      for (const [tenantId, email] of [
        [tenant.id, "dup@example.com"],
        [tenant.id, "DUP@example.com"],
        [other.id, "dup@example.com"],
      ] as const) {
        const res = await createUser(tenantId, { ...body, email });
        expect(res.statusCode, email).toBe(409);
        expect(res.json().code).toBe("conflict");
        expect(res.json().message).toContain("dup@example.com");
      }
    });

    it("refuses an unknown permission with one 400 error naming the value and the real permissions", async () => {
      const tenant = await createTenant({ name: "Permission Co" });
      const res = await createUser(tenant.id, {
        email: "perm@example.com",
        password: "long enough password",
        name: "Perm",
        permissions: ["reports.read", "reports.delete"],
      });
      expect(res.statusCode, res.body).toBe(400);
      const body = res.json();
      expect(body.code).toBe("validation_error");
      expect(body.message).toMatch(/^permissions\[1\] 'reports\.delete' is not one of 'account\.admin', /);
      expect(body.data.errors).toEqual([{ path: "permissions[1]", message: expect.stringContaining("'usage.read'") }]);
      const stored = await t.ctx.db.query("select 1 from users where email = 'perm@example.com'");
      expect(stored).toEqual([]);
    });

    it.each([
      ["an unknown permission", { permissions: ["reports.read", "reports.delete"] }, "reports.delete"],
      ["a short password", { password: "short" }, "password"],
      ["a bad email", { email: "not-an-email" }, "email"],
      ["a missing name", { name: undefined }, "name"],
      ["an unknown property", { admin: true }, "admin"],
    ])("refuses %s with 400 naming it", async (_label, change, named) => {
      const tenant = await createTenant({ name: "Validation Co" });
      const payload = {
        email: `valid-${Math.random().toString(36).slice(2)}@example.com`,
        password: "long enough password",
        name: "Val",
        permissions: [],
        ...change,
      };
      const res = await createUser(tenant.id, payload);
      expect(res.statusCode, res.body).toBe(400);
      expect(res.json().code).toBe("validation_error");
      expect(res.json().message).toContain(named);
    });

    it("disabling a person refuses their token and their sign-in; enabling restores both", async () => {
      const who = await seedTenancy(t);
      const me = () => t.call({ method: "GET", url: "/api/v1/me", headers: { authorization: who.bearer } });
      expect((await me()).statusCode).toBe(200);

      const disabled = await admin({
        method: "PATCH",
        url: `/api/admin/users/${who.userId}`,
        payload: { disabled: true },
      });
      expect(disabled.statusCode, disabled.body).toBe(200);
      expect(disabled.json().data).toMatchObject({ id: who.userId, disabled: true });

      const refused = await me();
      expect(refused.statusCode).toBe(401);
      expect(refused.json().code).toBe("unauthorized");
      const badLogin = await login(who.email, who.password);
      expect(badLogin.statusCode).toBe(401);
      expect(badLogin.json().code).toBe("unauthorized");

      const enabled = await admin({
        method: "PATCH",
        url: `/api/admin/users/${who.userId}`,
        payload: { disabled: false },
      });
      expect(enabled.json().data.disabled).toBe(false);
      expect((await me()).statusCode).toBe(200);
      expect((await login(who.email, who.password)).statusCode).toBe(200);
    });

    it("answers 404 for an unknown user and 400 for an unknown permission on change", async () => {
      const missing = await admin({
        method: "PATCH",
        url: "/api/admin/users/usr_nobody0",
        payload: { disabled: true },
      });
      expect(missing.statusCode).toBe(404);
      expect(missing.json().code).toBe("not_found");

      const who = await seedTenancy(t);
      const bad = await admin({
        method: "PATCH",
        url: `/api/admin/users/${who.userId}`,
        payload: { permissions: ["account.owner"] },
      });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toContain("account.owner");
    });

    it("a key keeps working after the person who created it is disabled", async () => {
      const who = await seedTenancy(t);
      // The key has not been used yet, so nothing about it is cached.
      const disabled = await admin({
        method: "PATCH",
        url: `/api/admin/users/${who.userId}`,
        payload: { disabled: true },
      });
      expect(disabled.statusCode).toBe(200);
      expect((await scopes(who.bearer)).statusCode).toBe(401);
      const res = await scopes(who.apiKey);
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toContain("account.admin");
    });

    it("the tenant's audit log shows what the admin did", async () => {
      const who = await seedTenancy(t);
      const helper = await createUser(who.tenantId, {
        email: `helper-${Date.now()}@example.com`,
        password: "long enough password",
        name: "Helper",
        permissions: ["reports.read"],
      });
      const helperId: string = helper.json().data.id;
      await admin({ method: "PATCH", url: `/api/admin/users/${helperId}`, payload: { disabled: true } });
      await admin({ method: "PATCH", url: `/api/admin/users/${helperId}`, payload: { disabled: false } });
      await admin({ method: "PATCH", url: `/api/admin/tenants/${who.tenantId}`, payload: { webhookAllowance: 10 } });

      const res = await t.call({
        method: "GET",
        url: "/api/v1/audit-log?limit=100",
        headers: { authorization: who.bearer },
      });
      expect(res.statusCode).toBe(200);
      const items = res.json().data as AuditItem[];
      const byAdmin = items.filter((item) => item.actor.type === "admin");
      for (const action of ["user.created", "user.disabled", "user.enabled", "tenant.updated"]) {
        const entry = byAdmin.find((item) => item.action === action);
        expect(entry, action).toBeDefined();
        expect(entry?.actor).toEqual({ type: "admin", id: null, name: "admin" });
      }
      expect(byAdmin.find((item) => item.action === "user.disabled")?.subject).toEqual({ type: "user", id: helperId });

      // Another tenant sees none of it.
      const stranger = await seedTenancy(t);
      const theirs = await t.call({
        method: "GET",
        url: "/api/v1/audit-log?limit=100",
        headers: { authorization: stranger.bearer },
      });
      const subjects = (theirs.json().data as AuditItem[]).map((item) => item.subject?.id);
      expect(subjects).not.toContain(helperId);
    });
  });

  describe("jobs", () => {
    it("lists the registered jobs", async () => {
      const res = await admin({ method: "GET", url: "/api/admin/jobs" });
      expect(res.statusCode).toBe(200);
      expect(res.json().data).toContainEqual(expect.objectContaining({ name: "retention", cron: expect.any(String) }));
    });

    it("runs retention now, as of the given instant, and deletes only rows past their retention", async () => {
      const now = new Date("2030-06-15T12:00:00.000Z");
      const insertBeat = (node: string, lastSeen: Date) =>
        t.ctx.db.query(
          "insert into node_heartbeats (node_id, role, started_at, last_seen_at) values ($1, 'worker', $2, $2)",
          [node, lastSeen],
        );
      await insertBeat("node_old", new Date(now.getTime() - 2 * DAY_MS));
      await insertBeat("node_recent", new Date(now.getTime() - 60 * 60 * 1000));

      const res = await admin({
        method: "POST",
        url: "/api/admin/jobs/retention/run",
        payload: { now: now.toISOString() },
      });
      expect(res.statusCode, res.body).toBe(200);
      const run = res.json().data;
      expect(run).toMatchObject({ job: "retention", ran: true });
      expect(run.slot).toMatch(/^manual:/);
      expect(run.summary.deleted.node_heartbeats).toBe(1);
      expect(run.summary.deleted.job_runs).toEqual(expect.any(Number));
      expect(run.finishedAt).toEqual(expect.any(String));

      const left = await t.ctx.db.query<{ node_id: string }>(
        "select node_id from node_heartbeats where node_id in ('node_old', 'node_recent')",
      );
      expect(left.map((row) => row.node_id)).toEqual(["node_recent"]);

      const [recorded] = await t.ctx.db.query<{ manual: boolean; finished_at: Date | null; error: string | null }>(
        "select manual, finished_at, error from job_runs where slot = $1",
        [run.slot],
      );
      expect(recorded).toMatchObject({ manual: true, error: null });
      expect(recorded?.finished_at).not.toBeNull();
      await t.ctx.db.query("delete from node_heartbeats where node_id = 'node_recent'");
    });

    it("never skips a manual run as a duplicate, and runs without a body", async () => {
      const first = await admin({ method: "POST", url: "/api/admin/jobs/retention/run", payload: {} });
      const second = await admin({ method: "POST", url: "/api/admin/jobs/retention/run", payload: {} });
      const third = await admin({ method: "POST", url: "/api/admin/jobs/retention/run" });
      for (const res of [first, second, third]) {
        expect(res.statusCode, res.body).toBe(200);
        expect(res.json().data.ran).toBe(true);
      }
      const slots = new Set([first, second, third].map((res) => res.json().data.slot));
      expect(slots.size).toBe(3);
    });

    it("refuses to run a job as of an instant its day arithmetic cannot hold, naming now", async () => {
      for (const now of ["0001-01-01T00:00:00Z", "1969-12-31T23:59:59Z", "9999-12-31T00:00:00Z"]) {
        const res = await admin({ method: "POST", url: "/api/admin/jobs/rollup-blocks/run", payload: { now } });
        expect(res.statusCode, res.body).toBe(400);
        expect(res.json().data.errors).toEqual([{ path: "now", message: expect.stringContaining("1970-01-01") }]);
      }
      const later = await admin({ method: "POST", url: "/api/admin/jobs/rollup-blocks/run", payload: {} });
      expect(later.statusCode, later.body).toBe(200);
    });

    it("answers 404 naming the known jobs for an unknown job, and 400 for a bad instant", async () => {
      const res = await admin({ method: "POST", url: "/api/admin/jobs/no-such-job/run", payload: {} });
      expect(res.statusCode).toBe(404);
      expect(res.json().code).toBe("not_found");
      expect(res.json().message).toContain("no-such-job");
      for (const job of t.ctx.jobs.list()) expect(res.json().message).toContain(job.name);

      const bad = await admin({ method: "POST", url: "/api/admin/jobs/retention/run", payload: { now: "yesterday" } });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toContain("now");
    });
  });

  describe("webhook usage", () => {
    it("answers the month's count, the allowance and its 110% sending limit, and the events held", async () => {
      const tenant = await createTenant({ name: "Metered", webhookAllowance: 15 });
      const res = await admin({ method: "GET", url: `/api/admin/tenants/${tenant.id}/webhook-usage?month=2026-02` });
      expect(res.statusCode, res.body).toBe(200);
      expect(res.json().data).toEqual({ month: "2026-02", sent: 0, allowance: 15, sendingLimit: 17, held: 0 });
      await t.ctx.db.query("insert into webhook_usage (tenant_id, month, sent) values ($1, '2026-02-01', 12)", [
        tenant.id,
      ]);
      const counted = await admin({
        method: "GET",
        url: `/api/admin/tenants/${tenant.id}/webhook-usage?month=2026-02`,
      });
      expect(counted.json().data).toMatchObject({ sent: 12 });
      // Without a month: the current one (UTC), counted separately.
      const current = await admin({ method: "GET", url: `/api/admin/tenants/${tenant.id}/webhook-usage` });
      expect(current.json().data).toMatchObject({ month: t.clock.now().toISOString().slice(0, 7), sent: 0 });
    });

    it("shows no limit for an unlimited tenant, 404 for an unknown one and 400 for a bad month", async () => {
      const unlimited = await createTenant({ name: "Unlimited", webhookAllowance: null });
      const res = await admin({ method: "GET", url: `/api/admin/tenants/${unlimited.id}/webhook-usage` });
      expect(res.json().data).toMatchObject({ allowance: null, sendingLimit: null });
      const unknown = await admin({ method: "GET", url: "/api/admin/tenants/ten_nosuch/webhook-usage" });
      expect(unknown.statusCode).toBe(404);
      const bad = await admin({ method: "GET", url: `/api/admin/tenants/${unlimited.id}/webhook-usage?month=2026-13` });
      expect(bad.statusCode).toBe(400);
      expect(bad.json().message).toContain("month");
    });
  });
});
