import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SAVED_REPORT_LIMITS } from "../src/features/saved-reports/index.js";
import { createUser } from "../src/features/tenants/index.js";
import { seedTenancy, startTestApp, type Tenancy, type TestApp } from "./helpers/app.js";

const BASE = "/api/v1/saved-reports";
const KEYS = ["createdAt", "createdBy", "id", "name", "params", "report"];

let t: TestApp;
beforeAll(async () => {
  t = await startTestApp();
});
afterAll(() => t.close());

type Auth = string;
const call = (auth: Auth, method: "GET" | "POST" | "PATCH" | "DELETE", url: string, payload?: object) =>
  t.call({ method, url, headers: { authorization: auth }, ...(payload ? { payload } : {}) });

function fieldsOf(body: string): string[] {
  const parsed = JSON.parse(body) as { data: { errors?: { path: string }[] } | null };
  return (parsed.data?.errors ?? []).map((error) => error.path);
}

/** A second person of the tenant holding only reports.read, signed in. */
async function reader(who: Tenancy, name: string): Promise<{ bearer: string; id: string }> {
  const email = `${name.toLowerCase()}-${Date.now()}@example.com`;
  const password = "correct horse battery";
  const user = await createUser(
    t.ctx.db,
    who.tenantId,
    { email, password, name, permissions: ["reports.read"] },
    { type: "system", name: "test" },
    t.clock.now(),
  );
  const login = await t.call({ method: "POST", url: "/api/v1/auth", payload: { email, password } });
  return { bearer: `Bearer ${login.json().data.token}`, id: user.id };
}

describe("saved reports", () => {
  let who: Tenancy;
  beforeAll(async () => {
    who = await seedTenancy(t);
  });

  it("creates, reads, lists, renames and deletes a saved report", async () => {
    const created = await call(who.bearer, "POST", BASE, {
      name: "  EU revenue  ",
      report: "performance",
      params: { groupBy: "country", country: "DE,FR", preset: "last-month" },
    });
    expect(created.statusCode, created.body).toBe(201);
    const record = created.json().data;
    expect(Object.keys(record).sort()).toEqual(KEYS);
    expect(record).toMatchObject({
      name: "EU revenue",
      report: "performance",
      params: { groupBy: "country", country: "DE,FR", preset: "last-month" },
      createdBy: { id: who.userId },
      createdAt: t.clock.now().toISOString(),
    });
    expect(record.id).toMatch(/^srp_/);

    const read = await call(who.bearer, "GET", `${BASE}/${record.id}`);
    expect(read.statusCode).toBe(200);
    expect(read.json().data).toEqual(record);

    await call(who.bearer, "POST", BASE, { name: "accounts view", report: "accounts" });
    const all = await call(who.bearer, "GET", `${BASE}?limit=1`);
    expect(all.statusCode).toBe(200);
    expect(all.json().pagination).toEqual({ offset: 0, limit: 1, total: 2 });
    expect(all.json().data[0].name).toBe("accounts view");
    const kind = await call(who.bearer, "GET", `${BASE}?report=performance`);
    expect(kind.json().data.map((r: { id: string }) => r.id)).toEqual([record.id]);
    const search = await call(who.bearer, "GET", `${BASE}?search=REVEN`);
    expect(search.json().data.map((r: { id: string }) => r.id)).toEqual([record.id]);

    const renamed = await call(who.bearer, "PATCH", `${BASE}/${record.id}`, { name: "EU revenue (monthly)" });
    expect(renamed.statusCode, renamed.body).toBe(200);
    expect(renamed.json().data).toEqual({ ...record, name: "EU revenue (monthly)" });
    const reparam = await call(who.bearer, "PATCH", `${BASE}/${record.id}`, { params: { groupBy: "link" } });
    expect(reparam.json().data.params).toEqual({ groupBy: "link" });

    const deleted = await call(who.bearer, "DELETE", `${BASE}/${record.id}`);
    expect(deleted.statusCode).toBe(200);
    expect(deleted.json().data).toEqual({ id: record.id, deleted: true });
    expect((await call(who.bearer, "GET", `${BASE}/${record.id}`)).statusCode).toBe(404);
    expect((await call(who.bearer, "DELETE", `${BASE}/${record.id}`)).statusCode).toBe(404);
  });

  it("refuses a taken name regardless of case with a 409 naming name", async () => {
    const first = await call(who.bearer, "POST", BASE, { name: "Weekly", report: "links" });
    expect(first.statusCode).toBe(201);
    const again = await call(who.apiKey, "POST", BASE, { name: "WEEKLY", report: "performance" });
    expect(again.statusCode).toBe(409);
    expect(fieldsOf(again.body)).toEqual(["name"]);
    const other = await call(who.bearer, "POST", BASE, { name: "Daily", report: "links" });
    const rename = await call(who.bearer, "PATCH", `${BASE}/${other.json().data.id}`, { name: "weekly" });
    expect(rename.statusCode).toBe(409);
    expect(fieldsOf(rename.body)).toEqual(["name"]);
    // Renaming to its own name (another case) is no conflict.
    const self = await call(who.bearer, "PATCH", `${BASE}/${first.json().data.id}`, { name: "weekly" });
    expect(self.statusCode).toBe(200);
  });

  it("answers a 400 naming the field for bad input", async () => {
    const cases: [object, string][] = [
      [{ report: "performance" }, "name"],
      [{ name: "", report: "performance" }, "name"],
      [{ name: "   ", report: "performance" }, "name"],
      [{ name: "x".repeat(SAVED_REPORT_LIMITS.nameLength + 1), report: "performance" }, "name"],
      [{ name: "ok" }, "report"],
      [{ name: "ok", report: "clicks" }, "report"],
      [
        { name: "ok", report: "links", params: { a: "x".repeat(SAVED_REPORT_LIMITS.paramValueLength + 1) } },
        "params.a",
      ],
      [{ name: "ok", report: "links", params: { "bad name": "x" } }, "params.bad name"],
      [{ name: "ok", report: "links", extra: true }, "extra"],
    ];
    for (const [payload, field] of cases) {
      const res = await call(who.bearer, "POST", BASE, payload);
      expect(res.statusCode, JSON.stringify(payload)).toBe(400);
      expect(fieldsOf(res.body).join(" "), JSON.stringify(payload)).toContain(field);
    }
    const many = Object.fromEntries(Array.from({ length: SAVED_REPORT_LIMITS.params + 1 }, (_, i) => [`p${i}`, "1"]));
    const tooMany = await call(who.bearer, "POST", BASE, { name: "ok", report: "links", params: many });
    expect(tooMany.statusCode).toBe(400);
    expect(fieldsOf(tooMany.body).join(" ")).toContain("params");
    const list = await call(who.bearer, "GET", `${BASE}?limit=0`);
    expect(list.statusCode).toBe(400);
    expect(fieldsOf(list.body)).toContain("limit");
  });

  it("hides another tenant's saved reports (404)", async () => {
    const mine = await call(who.bearer, "POST", BASE, { name: "Private", report: "accounts" });
    const id = mine.json().data.id;
    const stranger = await seedTenancy(t);
    expect((await call(stranger.bearer, "GET", `${BASE}/${id}`)).statusCode).toBe(404);
    expect((await call(stranger.bearer, "PATCH", `${BASE}/${id}`, { name: "Mine now" })).statusCode).toBe(404);
    expect((await call(stranger.bearer, "DELETE", `${BASE}/${id}`)).statusCode).toBe(404);
    expect((await call(stranger.bearer, "GET", BASE)).json().pagination.total).toBe(0);
    // The same name is free in another tenant.
    expect((await call(stranger.bearer, "POST", BASE, { name: "Private", report: "accounts" })).statusCode).toBe(201);
  });

  it("lets readers of reports save their own, and only an admin change another's", async () => {
    const person = await reader(who, "Reader");
    const own = await call(person.bearer, "POST", BASE, { name: "Reader's view", report: "performance" });
    expect(own.statusCode, own.body).toBe(201);
    expect(own.json().data.createdBy).toEqual({ id: person.id, name: "Reader" });
    const ownId = own.json().data.id;
    expect((await call(person.bearer, "PATCH", `${BASE}/${ownId}`, { name: "Reader's own" })).statusCode).toBe(200);

    const admins = await call(who.bearer, "POST", BASE, { name: "Admin's view", report: "performance" });
    const adminsId = admins.json().data.id;
    expect((await call(person.bearer, "GET", `${BASE}/${adminsId}`)).statusCode).toBe(200);
    expect((await call(person.bearer, "PATCH", `${BASE}/${adminsId}`, { name: "Taken over" })).statusCode).toBe(403);
    expect((await call(person.bearer, "DELETE", `${BASE}/${adminsId}`)).statusCode).toBe(403);
    // An account admin tidies anyone's.
    expect((await call(who.bearer, "DELETE", `${BASE}/${ownId}`)).statusCode).toBe(200);

    const outsider = await seedTenancy(t, { permissions: ["catalog.read"] });
    expect((await call(outsider.bearer, "GET", BASE)).statusCode).toBe(403);
    expect((await call(outsider.bearer, "POST", BASE, { name: "x", report: "links" })).statusCode).toBe(403);
  });

  it("caps the saved reports of a tenant (409)", async () => {
    const full = await seedTenancy(t);
    const rows = Array.from({ length: SAVED_REPORT_LIMITS.perTenant }, (_, i) => i);
    await t.ctx.db.query(
      `insert into saved_reports (id, tenant_id, name, report, created_by_id, created_by_name)
       select 'srp_fill' || n, $1, 'fill ' || n, 'links', $2, 'x' from unnest($3::int[]) as n`,
      [full.tenantId, full.userId, rows],
    );
    const res = await call(full.bearer, "POST", BASE, { name: "one more", report: "links" });
    expect(res.statusCode).toBe(409);
    expect(res.json().message).toContain(String(SAVED_REPORT_LIMITS.perTenant));
  });
});
